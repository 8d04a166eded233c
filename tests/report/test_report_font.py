"""The report's embedded CJK font (issue 40, 5): the page carries exactly the glyphs it uses, from package data,
with the licence's names; characters the font lacks are named; model text cannot move the font's slots. Cut in pure
Python since issue 36 (report/woff.py): fontTools, a test dependency, checks the result; the core runs without it."""

from __future__ import annotations

import base64
import io
import re
import subprocess
import sys
from importlib import resources

import pytest

from howtobench.fonts import CORE_CJK_FONT as ASSET
from howtobench.report.font import CSS_SLOT, NOTE_SLOT, cjk_characters, page_font, with_page_font

TTFont = pytest.importorskip("fontTools.ttLib", reason="the [dev] extra installs fontTools (the font checks)").TTFont


def _embedded(css: str) -> TTFont:
    found = re.search(r"base64,([A-Za-z0-9+/=]+)\)", css)
    assert found is not None, css[:200]
    return TTFont(io.BytesIO(base64.b64decode(found.group(1))))


def test_the_shipped_subset_is_package_data_with_its_licence() -> None:
    assets = resources.files("howtobench").joinpath("assets")
    font = TTFont(io.BytesIO(assets.joinpath("cjk-sc-subset.woff").read_bytes()))
    cmap = font.getBestCmap()
    assert font.flavor == "woff" and len(cmap) > 7000 and "glyf" in font and "CFF " not in font
    assert all(ord(ch) in cmap for ch in "的一是了我不人在他有这中大来上国个到说们为子和你地出道也时年得就那要下以生会")
    licence = assets.joinpath("OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Adobe Systems Incorporated" in licence
    assert ASSET == "assets/cjk-sc-subset.woff"
    assert len(font.getGlyphOrder()) == len(set(cmap.values())) + 1  # the characters' glyphs and .notdef, no more


def test_a_page_embeds_only_the_glyphs_it_uses() -> None:
    text = "<p>Model 甲 wrote 春眠不觉晓，处处闻啼鸟。 and 甲 again: ASCII stays with the system's fonts</p>"
    font = page_font(text)
    assert font is not None and font.missing == ""
    assert cjk_characters(text) == "甲春眠不觉晓，处处闻啼鸟。".replace("处处", "处")
    embedded = _embedded(font.css)
    have = {chr(c) for c in embedded.getBestCmap()}
    assert have == set(cjk_characters(text)) and font.characters == len(have)
    assert "A" not in have
    names = {r.nameID: r.toUnicode() for r in embedded["name"].names if r.platformID == 3}
    assert "Adobe" in names[0] and "SIL Open Font License" in names[13]  # OFL condition 2: the notice travels
    assert font.size < 20_000 and "(12 characters, 3 KB; " in font.note


def test_the_core_cuts_the_font_without_fonttools() -> None:
    """A core install has neither fontTools nor brotli (issue 36): the page font is cut with them made unimportable."""
    code = ("import sys; sys.modules.update(fontTools=None, brotli=None)\n"
            "from howtobench.report.font import page_font\n"
            "font = page_font('春眠不觉晓')\n"
            "assert font is not None and font.characters == 5 and 'data:font/woff;base64,' in font.css\n"
            "assert 'fontTools' not in {m.split('.')[0] for m in sys.modules if sys.modules[m] is not None}\n"
            "print('cut', font.size)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("cut "), done.stderr


def test_characters_the_font_lacks_are_named_not_hidden() -> None:
    font = page_font("\U0001F600 and \U00020000 and 中文")  # an emoji, a CJK Extension B character
    assert font is not None and font.missing == "\U0001F600\U00020000" and font.characters == 2
    assert "2 characters are not in it (\U0001F600 \U00020000): they show in this computer's own fonts, or as a box." \
        in font.note
    one = page_font("\ue828 中文\ufeff")  # a private-use character is named by its code point; U+FEFF draws nothing
    assert one is not None and "1 character is not in it (U+E828): it shows in" in one.note


def test_no_chinese_no_font() -> None:
    page = f"<style>{CSS_SLOT}</style><p>{NOTE_SLOT}</p>"
    assert page_font(page) is None
    assert with_page_font(page) == "<style></style><p>This page has no Chinese text, so it embeds no font.</p>"


def test_model_text_cannot_reach_the_slots() -> None:
    """The slots hold `<`, which autoescaping turns into &lt;: a writing that quotes them stays text."""
    quoted = CSS_SLOT.replace("<", "&lt;").replace(">", "&gt;")
    page = f"<style>{CSS_SLOT}</style><p>{NOTE_SLOT}</p><pre>写作 {quoted}</pre>"
    out = with_page_font(page)
    assert out.count("@font-face") == 1 and out.endswith(f"<pre>写作 {quoted}</pre>")
