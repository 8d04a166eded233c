"""Overlap metrics against the human reference: tokenization, BLEU-1, ROUGE-L, sacreBLEU statistics.

Definitions (the paper's setup, made precise):

* Chinese tokens come from ONE `jieba.lcut(text)` call per text (default mode, HMM on).
  - BLEU tokens: every token jieba yields, whitespace tokens (" ", "\n") included, exactly the list the
    authors' `compute_bleu` builds with `list(jieba.cut(text))`.
  - ROUGE tokens: exactly the word stream `rouge-chinese` builds from `" ".join(lcut(text))` (its
    sentence splitter, then `" ".join(s.split())` per non-empty sentence, flattened by `split(" ")`).
    That stream keeps the package's quirks (a whitespace-only "sentence" becomes one empty token), so
    our values are bit-identical to `rouge_chinese.Rouge().get_scores(...)["rouge-l"]`. The splitter is
    `split_sentences` here, the same rules in our words: the package (unmaintained) is a test dependency
    only, against which the tests check both the splitter and the scores.
* English (`Item.language == "en"`) tokens: sacreBLEU's 13a tokenizer, lowercased — the standard
  WMT word tokenization; lowercased because these metrics measure wording overlap, not casing.
* BLEU-1 (the authors' `compute_bleu`, `code/tow/baselines/bleu_rouge.py`): clipped unigram precision, no
  brevity penalty, rounded to 6 decimals as they round it, then put on the 0-100 scale of the paper's Table 7:
  `100 * round(sum_w min(c_cand(w), c_ref(w)) / len(cand), 6)`; 0 when either side has no token.
  Vectorised (`BleuIndex`): the reference's vocabulary and counts are built once per item (shared by every
  model) with C-level `Counter`; a candidate is mapped to vocabulary ids by one C-level `map(dict.get)` and
  counted with `numpy.bincount`, and the clipped matches are one `numpy.minimum(...).sum()` — no Python-level
  loop per token, unlike their loop over a dict.
* ROUGE-L F1 (0-1, as rouge-chinese reports it): LCS over the whole token streams,
  `p = lcs/len(cand)`, `r = lcs/len(ref)`, `f = 2*p*r/(p+r+1e-8)` — same float operations as the package.
  The LCS is Hyyrö's bit-parallel algorithm over Python ints (the reference's match masks are built once
  and reused for every model), instead of the package's O(nm) dict table: same integer, ~1000x faster.
* sacreBLEU: standard BLEU-4 (`tokenize="zh"` or `"13a"`), sentence score with `effective_order=True`
  and exp smoothing; its sufficient statistics are kept so corpus BLEU is an aggregation, not a rerun.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Any

import jieba
import numpy as np
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from howtobench.data.models import Language

jieba.setLogLevel(60)  # jieba prints its dictionary loading to stderr; keep CLI output clean
_TOK13A = Tokenizer13a()  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class TextTokens:
    """Both token streams of one text, derived from one tokenizer pass."""

    bleu: tuple[str, ...]
    rouge: tuple[str, ...]


SENTENCE_END = "。！？?"
"""Marks that end a sentence (the full-width ones and the ASCII question mark; not the ASCII full stop)."""
CLOSING_QUOTES = "”’"
"""A closing quote after a sentence's end belongs to that sentence: the break comes after the quote."""
SENTENCE_ENDS = (re.compile(f"([{SENTENCE_END}])([^{CLOSING_QUOTES}])"), re.compile(f"(\\.{{6}})([^{CLOSING_QUOTES}])"),
                 re.compile(f"(…{{2}})([^{CLOSING_QUOTES}])"))
"""The three kinds of sentence end, each with the character after it (anything but a closing quote)."""
QUOTED_END = re.compile(f"([{SENTENCE_END}][{CLOSING_QUOTES}])([^，{SENTENCE_END}])")
"""A sentence end and its closing quote, then anything but a comma or another end."""


def split_sentences(text: str) -> list[str]:
    """rouge-chinese's sentence splitter, in our words. A line break goes after every sentence end that is not
    followed by a closing quote, the three kinds of end (a mark of `SENTENCE_END`, six ASCII dots, two
    ellipses) in three passes in that order, each over the previous one's text; then after an end with its
    closing quote, unless a comma or another end follows. Trailing whitespace goes, and the text is cut at every
    line break, its own included.

    The passes, their order and the regular expressions' consumption are the definition (ROUGE-L's tokens, so
    its values, depend on them): each match takes the character after the end, so of two ends in a row only the
    first is split from the next ("。。a" gives "。" and "。a"), while a later pass sees the earlier one's breaks."""
    for end in SENTENCE_ENDS:
        text = end.sub("\\1\n\\2", text)
    return QUOTED_END.sub("\\1\n\\2", text).rstrip().split("\n")


def rouge_chinese_words(spaced: str) -> tuple[str, ...]:
    """The word stream rouge-chinese scores for a space-joined text (its sentence splitter, its joins)."""
    sentences = [" ".join(s.split()) for s in split_sentences(spaced) if len(s) > 0]
    return tuple(word for sentence in sentences for word in sentence.split(" "))


def tokenize(text: str, language: Language = "zh") -> TextTokens:
    """Tokenize one text for BLEU-1 and ROUGE-L (see the module docstring for the exact definitions)."""
    if language == "en":
        words = tuple(_TOK13A(text.rstrip()).lower().split())
        return TextTokens(bleu=words, rouge=words)
    pieces = jieba.lcut(text)
    return TextTokens(bleu=tuple(pieces), rouge=rouge_chinese_words(" ".join(pieces)))


BLEU_DECIMALS = 6  # the authors round each writing's precision to 6 decimals (0-1 scale)


class BleuIndex:
    """One reference's unigram vocabulary and counts, so BLEU-1 of many candidates is a few array operations each."""

    def __init__(self, tokens: Sequence[str]) -> None:
        counts = Counter(tokens)
        self.ids: dict[str, int] = dict(zip(counts, range(len(counts)), strict=True))
        self.counts = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        self.length = len(tokens)

    def matches(self, candidate: Sequence[str]) -> int:
        """Candidate tokens matched by the reference, each token type clipped at its count in the reference."""
        ids = np.fromiter(map(self.ids.get, candidate, repeat(-1)), dtype=np.int64, count=len(candidate))
        known = ids[ids >= 0]
        return int(np.minimum(np.bincount(known, minlength=self.counts.size), self.counts).sum())

    def bleu1(self, candidate: Sequence[str]) -> float:
        """The authors' BLEU-1 x 100: clipped unigram precision rounded to 6 decimals; 0.0 when a side has no token."""
        if not candidate or self.length == 0:
            return 0.0
        return 100.0 * round(self.matches(candidate) / len(candidate), BLEU_DECIMALS)


def bleu1(candidate: Sequence[str], reference: Sequence[str] | BleuIndex) -> float:
    """The authors' BLEU-1 x 100 of one candidate against a reference's tokens (or its prepared `BleuIndex`)."""
    index = reference if isinstance(reference, BleuIndex) else BleuIndex(reference)
    return index.bleu1(candidate)


class LcsIndex:
    """Bit masks of one token sequence, so LCS against many others costs O(len(other) * len/64) word ops."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.length = len(tokens)
        self.full = (1 << self.length) - 1
        masks: dict[str, int] = {}
        for position, token in enumerate(tokens):
            masks[token] = masks.get(token, 0) | (1 << position)
        self.masks = masks

    def lcs(self, other: Iterable[str]) -> int:
        """Length of the longest common subsequence (Hyyrö / Allison-Dix bit-vector recurrence)."""
        masks, full, v = self.masks, self.full, self.full
        for token in other:
            match = masks.get(token)
            if match is None:
                continue
            u = v & match
            v = ((v + u) | (v - u)) & full
        return self.length - v.bit_count()


@dataclass(frozen=True)
class RougeL:
    """ROUGE-L of one candidate: precision, recall, F1 and the counts they come from."""

    p: float
    r: float
    f: float
    lcs: int
    hyp_len: int
    ref_len: int


def rouge_l(candidate: Sequence[str], reference: Sequence[str] | LcsIndex) -> RougeL:
    """ROUGE-L over whole token streams with rouge-chinese's exact arithmetic (inputs must be non-empty)."""
    index = reference if isinstance(reference, LcsIndex) else LcsIndex(reference)
    if not candidate or index.length == 0:
        raise ValueError("ROUGE-L needs a non-empty candidate and reference (rouge-chinese raises too)")
    llcs = index.lcs(candidate)
    r_lcs = llcs / index.length
    p_lcs = llcs / len(candidate)
    f_lcs = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    return RougeL(p=p_lcs, r=r_lcs, f=f_lcs, lcs=llcs, hyp_len=len(candidate), ref_len=index.length)


@lru_cache(maxsize=2)
def _sacrebleu(language: Language) -> BLEU:
    return BLEU(tokenize="zh" if language == "zh" else "13a", effective_order=True)


def sacrebleu_sentence(hypothesis: str, reference: str, language: Language = "zh") -> dict[str, Any]:
    """Standard sentence BLEU-4 (0-100) with the sufficient statistics corpus BLEU needs."""
    result = _sacrebleu(language).sentence_score(hypothesis, [reference])
    return {
        "score": float(result.score),
        "counts": list(result.counts),
        "totals": list(result.totals),
        "sys_len": int(result.sys_len),
        "ref_len": int(result.ref_len),
    }


def sacrebleu_corpus(stats: Iterable[dict[str, Any]]) -> float:
    """Corpus BLEU-4 (0-100) from per-sentence statistics: sums first, one BLEU after (sacreBLEU's corpus rule)."""
    rows = list(stats)
    if not rows:
        raise ValueError("corpus BLEU needs at least one sentence")
    order = len(rows[0]["counts"])
    correct = [sum(row["counts"][n] for row in rows) for n in range(order)]
    total = [sum(row["totals"][n] for row in rows) for n in range(order)]
    sys_len = sum(int(row["sys_len"]) for row in rows)
    ref_len = sum(int(row["ref_len"]) for row in rows)
    return float(BLEU.compute_bleu(correct, total, sys_len, ref_len, smooth_method="exp").score)


def sacrebleu_signature(language: Language = "zh") -> str:
    """sacreBLEU's reproducibility signature for the sentence scores we report."""
    return str(_sacrebleu(language).get_signature())
