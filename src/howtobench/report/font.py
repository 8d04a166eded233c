"""The report's own CJK font: the glyphs a page uses, embedded as a WOFF2 web font, so Chinese renders on a
machine without any CJK font and the page stays one self-contained file.

The glyphs come from `howtobench/assets/cjk-sc-subset.woff2` (core package data: Noto Sans CJK SC, cut to GB2312,
CJK punctuation and the benchmark's own characters by `scripts/build-font-subset`; SIL Open Font License, text
beside it). A page embeds the subset of that subset it needs (fontTools' subsetter): tens to a few hundred KB rather
than the 16 MB of the whole font. The family comes after the system's CJK fonts in the page's font stacks, so a
machine that has one uses it, and only characters at U+2E80 and above are taken from it (Latin stays in the
system's sans-serif). A character the font lacks (a rare hanzi outside its set, Korean) is counted and named in
the page's font note: it shows in the computer's own fonts, or as a box.
"""

from __future__ import annotations

import base64
import html
import io
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import brotli
from fontTools import subset
from fontTools.ttLib import TTFont, woff2

FAMILY = "Howtobench CJK"
ASSET = "assets/cjk-sc-subset.woff2"
SILENT = ("Cf", "Cs", "Cc")
FIRST_CJK = 0x2E80  # CJK radicals; below it the system's fonts draw Latin, Greek, Cyrillic and punctuation
FEATURES = ["kern"]
"""Layout features a page's font keeps. Horizontal Chinese needs none of the others, and keeping them all ('*') pulled
every alternate form (vertical, Japanese, Korean, traditional: `locl`, `vert`, `aalt`) into the closure: a
full-release report's 4,490 characters kept 8,386 glyphs (1.18 MB) instead of about 4,500."""
KEEP_NAMES = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # the copyright (0) and licence (13, 14) travel with every copy


@dataclass(frozen=True)
class PageFont:
    """The @font-face rule of one page and what it holds."""

    css: str
    size: int
    """Bytes of the embedded WOFF2 (before base64)."""
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
def _source() -> bytes:
    return resources.files("howtobench").joinpath(ASSET).read_bytes()


@lru_cache(maxsize=1)
def _covered() -> frozenset[int]:
    return frozenset(TTFont(io.BytesIO(_source())).getBestCmap())


def cjk_characters(text: str) -> str:
    """The characters of `text` at U+2E80 and above that draw a glyph (not a format character such as U+FEFF, nor a
    surrogate), each once, in order of first use."""
    return "".join(ch for ch in dict.fromkeys(text) if ord(ch) >= FIRST_CJK and unicodedata.category(ch) not in SILENT)


def page_font(text: str) -> PageFont | None:
    """The font for a page whose text is `text`: None when it has no CJK character."""
    wanted = cjk_characters(text)
    if not wanted:
        return None
    covered = _covered()
    have = [ord(ch) for ch in wanted if ord(ch) in covered]
    missing = "".join(ch for ch in wanted if ord(ch) not in covered)
    data = _subset(have) if have else b""
    css = (f'@font-face {{ font-family: "{FAMILY}"; font-display: block; '
           f'src: url(data:font/woff2;base64,{base64.b64encode(data).decode("ascii")}) format("woff2"); }}'
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


WOFF2_QUALITY = 9
"""Brotli quality of a page's font. fontTools always compresses WOFF2 at 11: for a full-release report's 4,490
characters that took 13.5 s on two busy cores; 9 takes 1.2 s for 4 % more bytes (1.39 MB instead of 1.33)."""


class _Brotli:
    """The `brotli` fontTools' woff2 writer calls, compressing at WOFF2_QUALITY (swapped in by `_woff2` only)."""

    MODE_FONT = brotli.MODE_FONT
    MODE_GENERIC = brotli.MODE_GENERIC
    decompress = staticmethod(brotli.decompress)

    @staticmethod
    def compress(data: bytes, mode: int = brotli.MODE_GENERIC, **_: Any) -> bytes:
        return bytes(brotli.compress(data, mode=mode, quality=WOFF2_QUALITY))


def _woff2(font: TTFont) -> bytes:
    """The font as WOFF2 at WOFF2_QUALITY (reports are written one at a time: the swap is not seen elsewhere)."""
    out = io.BytesIO()
    font.flavor = "woff2"
    saved = woff2.brotli
    woff2.brotli = _Brotli
    try:
        font.save(out)
    finally:
        woff2.brotli = saved
    return out.getvalue()


def _subset(unicodes: list[int]) -> bytes:
    options = subset.Options()
    options.flavor = "woff2"
    options.hinting = False
    options.name_IDs = KEEP_NAMES
    options.layout_features = FEATURES
    font = TTFont(io.BytesIO(_source()))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    return _woff2(font)
