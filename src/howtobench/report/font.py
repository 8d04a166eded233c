"""The report's own CJK font: the glyphs a page uses, embedded as a WOFF web font, so Chinese renders on a
machine without any CJK font and the page stays one self-contained file.

The glyphs come from `howtobench/assets/cjk-sc-subset.woff` (core package data: Noto Sans CJK SC, cut to GB2312,
CJK punctuation and the benchmark's own characters by `scripts/build-font-subset`; SIL Open Font License, text
beside it). A page embeds the subset of that subset it needs, cut in pure Python (`report/woff.py`: no fontTools,
no brotli in the core install, issue 36): tens to a few hundred KB rather than the 1.5 MB of the shipped file. The
family comes after the system's CJK fonts in the page's font stacks, so a machine that has one uses it, and only
characters at U+2E80 and above are taken from it (Latin stays in the system's sans-serif). A character the font
lacks (a rare hanzi outside its set, Korean) is counted and named in the page's font note: it shows in the
computer's own fonts, or as a box.
"""

from __future__ import annotations

import base64
import html
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from howtobench.fonts import core_cjk_font
from howtobench.report.woff import Font, read_woff, subset

FAMILY = "Howtobench CJK"
SILENT = ("Cf", "Cs", "Cc")
FIRST_CJK = 0x2E80  # CJK radicals; below it the system's fonts draw Latin, Greek, Cyrillic and punctuation


@dataclass(frozen=True)
class PageFont:
    """The @font-face rule of one page and what it holds."""

    css: str
    size: int
    """Bytes of the embedded WOFF (before base64)."""
    characters: int
    missing: str
    """The page's CJK characters the font has no glyph for, each once, in order of first use."""

    @property
    def note(self) -> str:
        """One sentence for the page's footer."""
        have = (f"Chinese on this page is drawn with an embedded subset of Noto Sans CJK SC ({self.characters} "
                f"characters, {self.size / 1024:.0f} KB; SIL Open Font License) where this computer has no CJK font")
        if not self.missing:
            return have + "."
        shown = " ".join(ch if ch.isprintable() and unicodedata.category(ch) != "Co" else f"U+{ord(ch):04X}"
                         for ch in self.missing[:20]) + (" …" if len(self.missing) > 20 else "")
        n = len(self.missing)
        return (f"{have}; {n} character{' is' if n == 1 else 's are'} not in it ({shown}): "
                f"{'it shows' if n == 1 else 'they show'} in this computer's own fonts, or as a box.")


@lru_cache(maxsize=1)
def _font() -> Font:
    """The shipped font, read once (a missing or broken asset is an error, not a page without a font)."""
    return Font(read_woff(core_cjk_font()))


def cjk_characters(text: str) -> str:
    """The characters of `text` at U+2E80 and above that draw a glyph (not a format character such as U+FEFF, nor a
    surrogate), each once, in order of first use."""
    return "".join(ch for ch in dict.fromkeys(text) if ord(ch) >= FIRST_CJK and unicodedata.category(ch) not in SILENT)


def page_font(text: str) -> PageFont | None:
    """The font for a page whose text is `text`: None when it has no CJK character."""
    wanted = cjk_characters(text)
    if not wanted:
        return None
    font = _font()
    have = [ord(ch) for ch in wanted if ord(ch) in font.cmap]
    missing = "".join(ch for ch in wanted if ord(ch) not in font.cmap)
    data = subset(font, have) if have else b""
    css = (f'@font-face {{ font-family: "{FAMILY}"; font-display: block; '
           f'src: url(data:font/woff;base64,{base64.b64encode(data).decode("ascii")}) format("woff"); }}'
           if data else "")
    return PageFont(css=css, size=len(data), characters=len(have), missing=missing)


CSS_SLOT = "/*<page-font>*/"
NOTE_SLOT = "<!--page-font-note-->"
"""Where the template leaves room for the rule and the note. Both hold a `<`, which autoescaping never lets model
text produce, and each is replaced once, in the head and before the judgment explorer: no writing can move them."""
NO_CJK = "This page has no Chinese text, so it embeds no font."


def with_page_font(page: str) -> str:
    """The rendered page with its font rule and its font note filled in."""
    font = page_font(page)
    css, note = (font.css, font.note) if font else ("", NO_CJK)
    return page.replace(CSS_SLOT, css, 1).replace(NOTE_SLOT, html.escape(note), 1)
