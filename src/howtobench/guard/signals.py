"""The guard's signals: cheap deterministic numbers about one writing, computed before any judge call.

Each is a plain function of the text (and of its item: the reference's length, the item's language, the prompt),
the same wherever it is computed (serve, the adapters, `score`, `judge` / `run`, `howtobench guard`), so a threshold
chosen on a file of writings means the same in a training run. Why these:

- `compression_ratio`: zlib-compressed bytes / UTF-8 bytes. A text that loops compresses far better than prose
  (OpenCompass flags degenerate generations with the same gzip ratio); the release's writings sit near 0.4-0.6.
- `repeated_paragraph_share`, `repeated_sentence_share`: the share of the text's characters in paragraphs
  (sentences) that repeat an earlier one verbatim (whitespace ignored) - the loop of verl #6673, the 30-fold
  paragraph.
- `repeated_ngram_share`: the share of character 20-grams (whitespace removed, each starting after a punctuation
  mark) seen earlier in the text: loops inside one paragraph, or repetition that changes its line breaks.
- `length_ratio`: characters / characters of the item's human reference (None without one): stubs and padding.
- `foreign_share`: the share of letters not in the item's script (Latin letters for a Chinese item, CJK for an
  English one): a Chinese item answered in English.
- `echo_share`: the share of the writing's (anchored) 20-grams found in the instruction and information: a prompt
  echoed back.
- `cliche_rate`: template phrases of a lexicon (`data/cliches.yaml`, or the user's) per 1,000 characters.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import asdict, dataclass
from functools import lru_cache

from howtobench.guard.lexicon import Lexicon

NGRAM = 20
MIN_REPEAT_CHARS = 8  # a repeated paragraph / sentence shorter than this (a heading, "---", "1.") is no loop
_SPACE = re.compile(r"\s+")
_PARAGRAPHS = re.compile(r"\n\s*\n|\n")
_SENTENCE_END = re.compile(r"[。！？!?；;…\n]+|\.\s+")
_PUNCTUATION = "[，。！？、；：,.;:!?]"


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Signals:
    """The signals of one writing (module docstring); None where a signal has no meaning (no reference, no text)."""

    chars: int
    length_ratio: float | None
    compression_ratio: float | None
    repeated_paragraph_share: float
    repeated_sentence_share: float
    repeated_ngram_share: float
    foreign_share: float | None
    echo_share: float
    cliche_rate: float

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


NAMES: tuple[str, ...] = tuple(Signals.__dataclass_fields__)


def signals(text: str, *, reference_chars: int = 0, language: str = "zh", prompt: str = "",
            lexicon: Lexicon | None = None) -> Signals:
    """The signals of `text` for an item whose reference has `reference_chars` characters (0: none), written in
    `language` (zh / en) and asked by `prompt` (instruction and information)."""
    stripped = text.strip()
    chars = len(stripped)
    dense = _SPACE.sub("", stripped)
    grams = _anchored(dense, NGRAM)  # shared by the repetition and the echo signals
    return Signals(
        chars=chars,
        length_ratio=chars / reference_chars if reference_chars > 0 else None,
        compression_ratio=compression_ratio(stripped),
        repeated_paragraph_share=repeated_share(_PARAGRAPHS.split(stripped), chars),
        repeated_sentence_share=repeated_share(_SENTENCE_END.split(stripped), chars),
        repeated_ngram_share=repeated_ngram_share(dense, grams=grams),
        foreign_share=foreign_share(stripped, language),
        echo_share=echo_share(dense, prompt, grams=grams),
        cliche_rate=(lexicon or Lexicon.default()).rate(stripped, chars),
    )


def compression_ratio(text: str) -> float | None:
    """zlib bytes / UTF-8 bytes (None for an empty text): near 0.5 for prose, near 0 for a loop."""
    data = text.encode()
    return len(zlib.compress(data, 6)) / len(data) if data else None


def repeated_share(parts: list[str], chars: int) -> float:
    """The share of `chars` in parts that repeat an earlier part verbatim (whitespace ignored)."""
    seen: set[str] = set()
    repeated = 0
    for part in parts:
        key = "".join(part.split())
        if len(key) < MIN_REPEAT_CHARS:
            continue
        if key in seen:
            repeated += len(part.strip())
        else:
            seen.add(key)
    return min(1.0, repeated / chars) if chars else 0.0


def repeated_ngram_share(dense: str, n: int = NGRAM, *, grams: list[str] | None = None) -> float:
    """The share of the n-grams of `dense` that begin after a punctuation mark and occurred earlier in it (0 when
    it has none). Anchoring on punctuation samples the same n-grams from every copy of a repeated passage, at a
    tenth of the cost of all n-grams; a loop without punctuation compresses to nothing (`compression_ratio`)."""
    grams = _anchored(dense, n) if grams is None else grams
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def foreign_share(text: str, language: str) -> float | None:
    """The share of letters (CJK and Latin) outside the item's script, None for a text without letters. A CJK
    character carries about a word, a Latin letter a fifth of one: the share weighs by words, not code points."""
    cjk = sum(map(len, _CJK.findall(text)))
    latin_words = sum(map(len, _LATIN.findall(text))) / 5
    if cjk + latin_words == 0:
        return None
    return (latin_words if language == "zh" else cjk) / (cjk + latin_words)


def echo_share(dense: str, prompt: str, n: int = NGRAM, *, grams: list[str] | None = None) -> float:
    """The share of the writing's punctuation-anchored n-grams (as `repeated_ngram_share`) that are anchored
    n-grams of the prompt (whitespace removed) too: a copied passage carries its punctuation, so both sample the
    same n-grams."""
    grams = _anchored(dense, n) if grams is None else grams
    if not grams:
        return 0.0
    asked = _prompt_grams(prompt, n)
    return len([g for g in grams if g in asked]) / len(grams)


@lru_cache(maxsize=8)
def _anchor_pattern(n: int) -> re.Pattern[str]:
    """A punctuation mark followed by n characters, caught by a lookahead (the n-grams overlap)."""
    return re.compile(_PUNCTUATION + f"(?=(.{{{n}}}))", re.DOTALL)



def _anchored(dense: str, n: int) -> list[str]:
    """The n-grams of `dense` that begin right after a punctuation mark."""
    return _anchor_pattern(n).findall(dense)  # a lookahead: every n characters after a mark, overlapping, in one C pass


@lru_cache(maxsize=256)
def _prompt_grams(prompt: str, n: int) -> frozenset[str]:
    """A prompt's anchored n-grams (whitespace removed), kept for the next writing of the same item (a GRPO
    group)."""
    return frozenset(_anchored(_SPACE.sub("", prompt), n))
