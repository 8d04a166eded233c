"""The pure-Python cut of the report's font (report/woff.py, issue 36), checked with fontTools (a test dependency):
every kept glyph's outline and metrics equal the shipped font's, checksums hold, composite glyphs keep their parts,
and both cmap formats are read and written."""

from __future__ import annotations

import io
from importlib import resources

import pytest

pytest.importorskip("fontTools", reason="the [dev] extra installs fontTools (the font checks)")

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont, newTable
from fontTools.ttLib.sfnt import SFNTReader, SFNTWriter
from fontTools.ttLib.tables._g_l_y_f import Glyph, GlyphComponent

from howtobench.fonts import CORE_CJK_FONT as ASSET
from howtobench.report.woff import Font, FontError, build_cmap, read_cmap, read_woff, subset

POEM = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。"


@pytest.fixture(scope="module")
def shipped() -> bytes:
    return resources.files("howtobench").joinpath(ASSET).read_bytes()


def _outline(font: TTFont, code: int) -> tuple[object, ...]:
    glyf, name = font["glyf"], font.getBestCmap()[code]
    coordinates, ends, flags = glyf[name].getCoordinates(glyf)
    return list(coordinates), list(ends), list(flags), font["hmtx"][name]


def test_kept_glyphs_equal_the_shipped_ones(shipped: bytes) -> None:
    source = TTFont(io.BytesIO(shipped))
    codes = [ord(ch) for ch in POEM] + [0x4E00, 0x9F99, max(source.getBestCmap())]
    cut = TTFont(io.BytesIO(subset(Font(read_woff(shipped)), codes)))
    assert cut.flavor == "woff" and set(cut.getBestCmap()) == set(codes)
    assert len(cut.getGlyphOrder()) == len(set(codes)) + 1  # and .notdef
    for code in codes:
        assert _outline(cut, code) == _outline(source, code), chr(code)
    names = {r.nameID: r.toUnicode() for r in cut["name"].names if r.platformID == 3}
    assert "Adobe" in names[0] and "SIL Open Font License" in names[13]


def test_checksums_are_those_of_the_spec(shipped: bytes) -> None:
    """Table checksums (fontTools raises on a wrong one) and head's checkSumAdjustment as fontTools' writer sets it."""
    data = subset(Font(read_woff(shipped)), map(ord, POEM))
    reader = SFNTReader(io.BytesIO(data), checkChecksums=2)
    out = io.BytesIO()
    writer = SFNTWriter(out, len(reader.keys()), flavor=None)
    for tag in sorted(reader.keys()):
        writer[tag] = reader[tag]
    writer.close()
    again = TTFont(io.BytesIO(out.getvalue()))
    assert again["head"].checkSumAdjustment == TTFont(io.BytesIO(data))["head"].checkSumAdjustment


def _square(size: int) -> Glyph:
    pen = TTGlyphPen(None)
    pen.moveTo((0, 0))
    pen.lineTo((0, size))
    pen.lineTo((size, size))
    pen.closePath()
    return pen.glyph()


def _with_composite() -> bytes:
    """A small font: 'x', 'a' and 'b' simple, 'c' made of 'b' moved by (300, 0) and 'a'; cmap format 4 only."""
    order = [".notdef", "x", "a", "b", "c"]
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder(order)
    builder.setupCharacterMap({0x4DFF: "x", 0x4E00: "a", 0x4E01: "b", 0x4E03: "c"})
    composite = Glyph()
    composite.numberOfContours = -1
    composite.components = []
    for name, x in (("b", 300), ("a", 0)):
        part = GlyphComponent()
        part.glyphName, part.x, part.y, part.flags = name, x, 0, 0x4  # ROUND_XY_TO_GRID; args as bytes or words
        composite.components.append(part)
    builder.setupGlyf({".notdef": _square(10), "x": _square(50), "a": _square(100), "b": _square(200), "c": composite})
    builder.setupHorizontalMetrics({name: (500 + 10 * i, 0) for i, name in enumerate(order)})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupNameTable({"familyName": "Test", "styleName": "Regular"})
    builder.setupOS2()
    builder.setupPost()
    builder.font.flavor = "woff"
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()


def test_a_composite_glyph_keeps_its_parts_renumbered() -> None:
    data = _with_composite()
    font = Font(read_woff(data))
    assert font.cmap == {0x4DFF: 1, 0x4E00: 2, 0x4E01: 3, 0x4E03: 4}  # read from a format 4 subtable
    cut = TTFont(io.BytesIO(subset(font, [0x4E03])))
    assert cut.getBestCmap().keys() == {0x4E03} and len(cut.getGlyphOrder()) == 4  # .notdef, c and its two parts
    parts = [cut.getGlyphID(p.glyphName) for p in cut["glyf"][cut.getBestCmap()[0x4E03]].components]
    assert parts == [2, 1]  # b and a, each one place lower than in the source: x is gone
    source = TTFont(io.BytesIO(data))
    assert _outline(cut, 0x4E03) == _outline(source, 0x4E03)
    cut_only_a = TTFont(io.BytesIO(subset(font, [0x4E00, 0x4E03])))
    assert _outline(cut_only_a, 0x4E00) == _outline(source, 0x4E00)


def test_cmap_formats_round_trip_and_format_4_is_left_out_when_too_big() -> None:
    small = {0x41: 1, 0x42: 2, 0x4E00: 3, 0x4E02: 4, 0x2A6D6: 5}
    table = build_cmap(small)
    assert read_cmap(table) == small
    parsed = TTFont()
    parsed.setGlyphOrder([f"glyph{g:05d}" for g in range(6)])
    parsed["cmap"] = newTable("cmap")
    parsed["cmap"].decompile(table, parsed)
    subtables = {(t.platformID, t.platEncID, t.format): t.cmap for t in parsed["cmap"].tables}
    assert subtables[3, 10, 12] == {c: f"glyph{g:05d}" for c, g in small.items()}
    assert subtables[3, 1, 4] == {c: f"glyph{g:05d}" for c, g in small.items() if c <= 0xFFFF}
    spread = {code: i + 1 for i, code in enumerate(range(0x4E00, 0x4E00 + 2 * 9000, 2))}  # 9,000 runs: > 64 KB
    big = build_cmap(spread)
    assert read_cmap(big) == spread and big[2:4] == b"\x00\x01"  # one subtable, format 12


def test_a_broken_asset_fails_loud() -> None:
    with pytest.raises(FontError, match="not a WOFF 1.0 file"):
        read_woff(b"wOF2" + bytes(60))
