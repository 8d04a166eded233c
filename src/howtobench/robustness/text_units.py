"""Small, well-defined text units for perturbations: paragraphs, sentences, language.

A *paragraph* is a non-empty line. Chinese writing and LLM output put one paragraph per line
(blank lines between are layout), so counting lines counts paragraphs for both one- and
two-newline styles; markdown headings and list items are paragraphs too. A text is rebuilt
with its own separator: a blank line when the text has any, else a single newline.

A *sentence* ends at a run of terminators plus any closing quotes or brackets. Chinese:
。！？… (and the ASCII !? that Chinese writers also use). English: .!? followed by
whitespace or the end of the paragraph, so "3.5" and "e.g." inside a word do not split.
Text after the last terminator is a sentence of its own.
"""

from __future__ import annotations

import re

from howtobench.data.models import Language

_CLOSERS = "”’」』）)\"'】》"
_SENTENCE = {
    "zh": re.compile(rf"[^。！？!?…]*(?:[。！？!?…]+[{_CLOSERS}]*|$)\s*"),
    "en": re.compile(rf"(?:[^.!?]|[.!?]+(?![{_CLOSERS}]*(?:\s|$)))*(?:[.!?]+[{_CLOSERS}]*(?=\s|$)|$)\s*"),
}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def paragraphs(text: str) -> list[str]:
    """The non-empty lines of `text`, stripped of surrounding whitespace."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def separator(text: str) -> str:
    """The paragraph separator this text uses: a blank line if it has one, else a newline."""
    return "\n\n" if re.search(r"\n[ \t\u3000]*\n", text) else "\n"


def sentences(paragraph: str, language: Language) -> list[str]:
    """Split one paragraph into sentences; each keeps its terminator and trailing spaces.

    Concatenating the result gives back the paragraph exactly.
    """
    pieces = [m.group(0) for m in _SENTENCE[language].finditer(paragraph) if m.group(0)]
    return pieces


def detect_language(text: str) -> Language:
    """Chinese when at least 10% of non-space characters are CJK ideographs, else English."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return "zh"
    return "zh" if len(_CJK.findall(text)) / len(chars) >= 0.1 else "en"
