"""Overlap judges ("bleu", "rouge", "sacrebleu"): reference-overlap baselines of the paper's Table 3.

The methods are registered by judges.overlap_methods, which imports this module (and its tokenisers, the
`[metrics]` extra) only when a judge is built.

They write the same `Judgment` records as ToW (no usage, no judge model), so the shared runner, the
leaderboard and the meta-evaluation read one format. Scales: "bleu" (the authors' BLEU-1) and "sacrebleu"
0-100, "rouge" (ROUGE-L F1) 0-1 like rouge-chinese; `meta["scale"]` says which.

An empty writing scores 0 (the lowest value, what the metric gives to no tokens) flagged `empty`, like ToW
gives empty writings the lowest leaf scores. An item without a reference cannot be scored: `failed`, no score.

Two paths, same numbers: `OverlapJudge.judge` scores one writing (references are prepared once and
memoised, so the 10 models of an item share them), and `score_overlap` scores a whole list item by item,
optionally on several processes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from multiprocessing.pool import Pool
from typing import Any

import jieba
import sacrebleu

from howtobench.data.models import Item, Language, Writing
from howtobench.judges.base import Judgment, source_if_read
from howtobench.judges.overlap_metrics import (
    BleuIndex,
    LcsIndex,
    TextTokens,
    rouge_l,
    sacrebleu_corpus,
    sacrebleu_sentence,
    sacrebleu_signature,
    tokenize,
)


@dataclass(frozen=True)
class PreparedReference:
    """A reference tokenized once: unigram vocabulary and counts for BLEU-1, LCS masks for ROUGE-L."""

    text: str
    language: Language
    tokens: TextTokens
    unigrams: BleuIndex
    lcs: LcsIndex


def prepare_reference(text: str, language: Language, tokens: TextTokens | None = None) -> PreparedReference:
    """Tokenize (unless given) and index one reference."""
    toks = tokens if tokens is not None else tokenize(text, language)
    return PreparedReference(text, language, toks, BleuIndex(toks.bleu), LcsIndex(toks.rouge))


@lru_cache(maxsize=512)
def _prepared(text: str, language: Language) -> PreparedReference:
    return prepare_reference(text, language)


def _tokenizer_name(language: Language) -> str:
    """Part of each score's reproducibility record (token streams change with the tokenizer's version)."""
    return f"sacrebleu-13a-lowercase {sacrebleu.__version__}" if language == "en" else f"jieba {jieba.__version__}"


def _bleu(ref: PreparedReference, hyp: TextTokens, text: str) -> tuple[float, dict[str, Any]]:
    score = ref.unigrams.bleu1(hyp.bleu)
    return score, {"scale": "0-100", "tokenizer": _tokenizer_name(ref.language), "hyp_len": len(hyp.bleu),
                   "ref_len": len(ref.tokens.bleu)}


def _rouge(ref: PreparedReference, hyp: TextTokens, text: str) -> tuple[float, dict[str, Any]]:
    result = rouge_l(hyp.rouge, ref.lcs)
    return result.f, {"scale": "0-1", "tokenizer": _tokenizer_name(ref.language), "p": result.p, "r": result.r,
                      "lcs": result.lcs, "hyp_len": result.hyp_len, "ref_len": result.ref_len}


def _sacrebleu(ref: PreparedReference, hyp: TextTokens, text: str) -> tuple[float, dict[str, Any]]:
    stats = sacrebleu_sentence(text, ref.text, ref.language)
    score = stats.pop("score")
    return score, {"scale": "0-100", "signature": sacrebleu_signature(ref.language), **stats}


Scorer = Callable[[PreparedReference, TextTokens, str], tuple[float, dict[str, Any]]]
SCORERS: dict[str, Scorer] = {"bleu": _bleu, "rouge": _rouge, "sacrebleu": _sacrebleu}


def overlap_judgment(method: str, item: Item, writing: Writing, ref: PreparedReference | None,
                     hyp: TextTokens | None) -> Judgment:
    """One judgment from prepared tokens (None tokens are allowed for empty writings / missing references)."""
    base = Judgment(method=method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                    reference_source=source_if_read(item, ref is not None))
    if ref is None:
        return base.model_copy(update={"status": "failed", "failures": ["item has no reference text"]})
    if writing.is_empty or hyp is None:
        # sacreBLEU still gets its statistics: an empty hypothesis counts in corpus BLEU (reference length)
        meta = _sacrebleu(ref, TextTokens((), ()), "")[1] if method == "sacrebleu" else {}
        return base.model_copy(update={"score": 0.0, "status": "empty", "meta": {**meta, "note": "empty writing"}})
    score, meta = SCORERS[method](ref, hyp, writing.output)
    return base.model_copy(update={"score": score, "meta": meta})


class OverlapJudge:
    """A Judge for one overlap method; stateless apart from the memo of prepared references."""

    def __init__(self, method: str) -> None:
        if method not in SCORERS:
            raise ValueError(f"unknown overlap method {method!r}; known: {', '.join(SCORERS)}")
        self.method = method

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        ref = _prepared(item.reference, item.language) if item.reference.strip() else None
        hyp = None if writing.is_empty else tokenize(writing.output, item.language)
        return overlap_judgment(self.method, item, writing, ref, hyp)


def corpus_sacrebleu_by_model(judgments: Iterable[Judgment]) -> dict[str, float]:
    """Corpus BLEU-4 (0-100) per model from "sacrebleu" judgments' statistics (sums first, as sacreBLEU does)."""
    stats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for j in judgments:
        if j.method == "sacrebleu" and "counts" in j.meta:
            stats[j.model].append(j.meta)
    return {model: sacrebleu_corpus(rows) for model, rows in sorted(stats.items())}


def score_item(item: Item, writings: Sequence[Writing], methods: Sequence[str]) -> list[list[Judgment]]:
    """Every writing of one item with each method (row per writing): the reference is tokenized once."""
    ref = prepare_reference(item.reference, item.language) if item.reference.strip() else None
    rows = []
    for writing in writings:
        hyp = None if writing.is_empty else tokenize(writing.output, item.language)
        rows.append([overlap_judgment(m, item, writing, ref, hyp) for m in methods])
    return rows


def _score_group(job: tuple[Item, list[Writing], tuple[str, ...]]) -> list[list[Judgment]]:
    return score_item(*job)


def score_overlap(pairs: Sequence[tuple[Item, Writing]], methods: Sequence[str] = tuple(SCORERS), *,
                  workers: int = 1, progress: Callable[[int], None] | None = None) -> dict[str, list[Judgment]]:
    """Score many writings with each method, item by item (memory stays one item's tokens).

    Each reference is tokenized once for all its writings; `workers` > 1 spreads items over processes
    (jieba is the cost and is CPU-bound). `progress(n)` is called as writings are scored. Returns the
    judgments per method, in the order of `pairs`.
    """
    unknown = [m for m in methods if m not in SCORERS]
    if unknown:
        raise ValueError(f"unknown overlap methods {unknown}; known: {', '.join(SCORERS)}")
    groups: dict[str, tuple[Item, list[Writing], list[int]]] = {}
    for position, (item, writing) in enumerate(pairs):
        group = groups.setdefault(item.id, (item, [], []))
        group[1].append(writing)
        group[2].append(position)
    jobs = [(item, writings, tuple(methods)) for item, writings, _ in groups.values()]
    rows: list[list[Judgment] | None] = [None] * len(pairs)
    with _pool(workers) as pool:
        results = pool.imap(_score_group, jobs, chunksize=4) if pool else map(_score_group, jobs)
        for (_, _, positions), scored in zip(groups.values(), results, strict=True):
            for position, row in zip(positions, scored, strict=True):
                rows[position] = row
            if progress is not None:
                progress(len(positions))
    return {m: [row[k] for row in rows if row is not None] for k, m in enumerate(methods)}


@contextmanager
def _pool(workers: int) -> Iterator[Pool | None]:
    """A fork pool with jieba loaded in each worker, or None for in-process scoring."""
    if workers <= 1:
        yield None
        return
    with get_context("fork").Pool(workers, initializer=jieba.initialize) as pool:
        yield pool
