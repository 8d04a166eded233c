"""Small text helpers shared by the steps: paragraphs, language, length units, fingerprints.

Definitions (documented here because results depend on them):
- A paragraph is a block separated by a blank line. Text whose paragraphs are only separated by single
  newlines (common in Chinese .txt files) is read with one paragraph per line. Canonical text joins
  paragraphs with one blank line ("\\n\\n"), the layout of the release.
- Language: `zh` when CJK ideographs are more than 30% of the letters (CJK ideographs plus Unicode letters
  and digits, i.e. punctuation and spaces excluded), else `en`. 30% rather than 50% because Chinese
  technical texts carry many Latin names, numbers and units.
- Length: `chars` counts characters without whitespace, so Chinese and English limits use one unit.
- Theme length ("at most five words", 4.5): English counts whitespace-separated words (<= 5); Chinese has
  no spaces, so it counts CJK/letter/digit characters (<= 10, i.e. about five two-character words).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from howtobench.data.models import Language

CJK_THRESHOLD = 0.30
MAX_THEME_WORDS_EN = 5
MAX_THEME_CHARS_ZH = 10

_BLANK_LINE = re.compile(r"\n[ \t\u3000]*\n")
_WS = re.compile(r"\s+")


def is_cjk(ch: str) -> bool:
    """True for CJK unified ideographs (basic block and extension A)."""
    code = ord(ch)
    return 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF


def _is_letter(ch: str) -> bool:
    return is_cjk(ch) or unicodedata.category(ch)[0] in ("L", "N")


def detect_language(text: str) -> Language:
    """`zh` if CJK ideographs exceed 30% of the letters, else `en` (see module docstring)."""
    letters = [ch for ch in text if _is_letter(ch)]
    if not letters:
        return "en"
    share = sum(1 for ch in letters if is_cjk(ch)) / len(letters)
    return "zh" if share > CJK_THRESHOLD else "en"


def paragraphs(text: str) -> list[str]:
    """Split into paragraphs: blank-line blocks, or lines when the text has no blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return []
    blocks = _BLANK_LINE.split(text) if _BLANK_LINE.search(text) else text.split("\n")
    return [b.strip() for b in blocks if b.strip()]


def canonical(text: str) -> str:
    """The text with paragraphs joined by one blank line and inner lines kept."""
    return "\n\n".join(paragraphs(text))


def count_chars(text: str) -> int:
    """Characters without whitespace: one length unit for both languages."""
    return sum(1 for ch in text if not ch.isspace())


def normalized(text: str) -> str:
    """Whitespace-free form used for exact de-duplication and fingerprints."""
    return _WS.sub("", unicodedata.normalize("NFKC", text))


def text_id(text: str) -> str:
    """A stable id from the normalized content, so the same text gets the same id in every run."""
    return "t" + hashlib.sha1(normalized(text).encode("utf-8")).hexdigest()[:12]


def shingles(text: str, n: int = 5) -> frozenset[str]:
    """Character n-grams of the normalized text (the whole text when it is shorter than n)."""
    flat = normalized(text).lower()
    if len(flat) <= n:
        return frozenset({flat})
    return frozenset(flat[i : i + n] for i in range(len(flat) - n + 1))




def theme_length(theme: str, language: Language) -> int:
    """Theme length in the unit of its language (words for en, characters for zh)."""
    if language == "en":
        return len(theme.split())
    return sum(1 for ch in theme if _is_letter(ch))


def theme_limit(language: Language) -> int:
    return MAX_THEME_WORDS_EN if language == "en" else MAX_THEME_CHARS_ZH
