"""A TrueType font cut down to some characters, read from and written as WOFF 1.0, in pure Python (struct, zlib).

Why not fontTools: it and brotli (WOFF2) were 33 MiB of the core install, for one use: the report's per-page font
(issue 36). The font the package ships (`assets/cjk-sc-subset.woff`, built by `scripts/build-font-subset`) is
already as simple as a subsetter could want: TrueType outlines, no hinting, no layout or vertical tables. So a cut
is: the glyphs the characters map to (with the components of any composite glyph), renumbered; `glyf`, `loca`,
`hmtx` and `cmap` rebuilt; `head`, `hhea`, `maxp`, `OS/2`, `name` (copyright and licence: OFL condition 2) copied
with their counts set; `post` as format 3 (no glyph names). Formats: the OpenType spec's table chapters
(https://learn.microsoft.com/typography/opentype/spec/) and WOFF 1.0 (https://www.w3.org/TR/WOFF/). WOFF rather
than WOFF2 costs about a third more bytes for the same glyphs (zlib instead of brotli with WOFF2's glyf transform).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

COPIED = ("OS/2", "name")
"""Tables copied as they are; every other table of the source is left out (see the module's docstring)."""
COMPOSITE_MORE, COMPOSITE_WORDS = 0x20, 0x01
COMPOSITE_SCALES = ((0x08, 2), (0x40, 4), (0x80, 8))  # WE_HAVE_A_SCALE, AN_X_AND_Y_SCALE, A_TWO_BY_TWO
FORMAT4_MAX = 65535


class FontError(ValueError):
    """The bytes are not a font this module reads (named in the message): a broken install, not a page's fault."""


def read_woff(data: bytes) -> dict[str, bytes]:
    """The tables of a WOFF 1.0 file, decompressed, by tag."""
    if data[:4] != b"wOFF":
        raise FontError(f"not a WOFF 1.0 file (starts {data[:4]!r})")
    (count,) = struct.unpack_from(">H", data, 12)
    tables = {}
    for i in range(count):
        tag, offset, stored, length, _ = struct.unpack_from(">4sIIII", data, 44 + 20 * i)
        raw = data[offset:offset + stored]
        table = zlib.decompress(raw) if stored < length else raw
        if len(table) != length:
            raise FontError(f"table {tag!r}: {len(table)} bytes, the directory says {length}")
        tables[tag.decode("latin-1")] = table
    return tables


def _u16(data: bytes, at: int) -> int:
    return int(struct.unpack_from(">H", data, at)[0])


def _i16(data: bytes, at: int) -> int:
    return int(struct.unpack_from(">h", data, at)[0])


def read_cmap(cmap: bytes) -> dict[int, int]:
    """Character -> glyph of the Windows Unicode subtable (full repertoire, format 12, if there is one; else BMP,
    format 4)."""
    subtables = {struct.unpack_from(">HH", cmap, 4 + 8 * i): struct.unpack_from(">I", cmap, 8 + 8 * i)[0]
                 for i in range(_u16(cmap, 2))}
    if (3, 10) in subtables and _u16(cmap, subtables[3, 10]) == 12:
        return _format12(cmap, subtables[3, 10])
    if (3, 1) in subtables and _u16(cmap, subtables[3, 1]) == 4:
        return _format4(cmap, subtables[3, 1])
    raise FontError(f"no Windows Unicode cmap subtable of format 4 or 12 (have {sorted(subtables)})")


def _format12(cmap: bytes, at: int) -> dict[int, int]:
    (groups,) = struct.unpack_from(">I", cmap, at + 12)
    found = {}
    for start, end, glyph in struct.iter_unpack(">III", cmap[at + 16:at + 16 + 12 * groups]):
        found.update({code: glyph + code - start for code in range(start, end + 1)})
    return found


def _format4(cmap: bytes, at: int) -> dict[int, int]:
    segments = _u16(cmap, at + 6) // 2
    ends, starts = at + 14, at + 16 + 2 * segments
    deltas, ranges = starts + 2 * segments, starts + 4 * segments
    found = {}
    for i in range(segments):
        start, end, delta, offset = (_u16(cmap, starts + 2 * i), _u16(cmap, ends + 2 * i),
                                     _i16(cmap, deltas + 2 * i), _u16(cmap, ranges + 2 * i))
        for code in range(start, min(end, 0xFFFE) + 1):
            glyph = code if offset == 0 else _u16(cmap, ranges + 2 * i + offset + 2 * (code - start))
            if offset == 0 or glyph:
                glyph = (glyph + delta) & 0xFFFF
            if glyph:
                found[code] = glyph
    return found


@dataclass(frozen=True)
class Font:
    """A TrueType font's tables (from `read_woff`), with what cutting it needs parsed once."""

    tables: dict[str, bytes]

    @cached_property
    def cmap(self) -> dict[int, int]:
        return read_cmap(self.tables["cmap"])

    @cached_property
    def glyph_count(self) -> int:
        return _u16(self.tables["maxp"], 4)

    @cached_property
    def loca(self) -> tuple[int, ...]:
        short = _i16(self.tables["head"], 50) == 0
        raw = self.tables["loca"]
        if short:
            return tuple(2 * v for v in struct.unpack(f">{len(raw) // 2}H", raw))
        return struct.unpack(f">{len(raw) // 4}I", raw)

    def glyph(self, gid: int) -> bytes:
        return self.tables["glyf"][self.loca[gid]:self.loca[gid + 1]]

    def metrics(self, gid: int) -> tuple[int, int]:
        """(advance width, left side bearing) of a glyph."""
        hmtx, long = self.tables["hmtx"], _u16(self.tables["hhea"], 34)
        if gid < long:
            return _u16(hmtx, 4 * gid), _i16(hmtx, 4 * gid + 2)
        return _u16(hmtx, 4 * (long - 1)), _i16(hmtx, 4 * long + 2 * (gid - long))

    def components(self, gid: int) -> list[tuple[int, int]]:
        """(byte position, glyph) of each component of a composite glyph; [] for a simple or empty one."""
        data = self.glyph(gid)
        if len(data) < 10 or _i16(data, 0) >= 0:
            return []
        found, at = [], 10
        while True:
            flags = _u16(data, at)
            found.append((at + 2, _u16(data, at + 2)))
            at += 4 + (4 if flags & COMPOSITE_WORDS else 2)
            at += sum(size for flag, size in COMPOSITE_SCALES if flags & flag)
            if not flags & COMPOSITE_MORE:
                return found


def subset(font: Font, codes: Iterable[int]) -> bytes:
    """The font cut to the characters `codes` it has (others ignored), as WOFF 1.0 bytes."""
    cmap = {code: font.cmap[code] for code in sorted(set(codes)) if code in font.cmap}
    order = _closure(font, [0, *cmap.values()])
    new = {old: i for i, old in enumerate(order)}
    glyf, offsets = bytearray(), [0]
    for old in order:
        data = bytearray(font.glyph(old))
        for at, part in font.components(old):
            struct.pack_into(">H", data, at, new[part])
        glyf += data + b"\0" * (-len(data) % 4)
        offsets.append(len(glyf))
    tables = {tag: font.tables[tag] for tag in COPIED}
    tables |= {
        "glyf": bytes(glyf),
        "loca": struct.pack(f">{len(offsets)}I", *offsets),
        "hmtx": b"".join(struct.pack(">Hh", *font.metrics(old)) for old in order),
        "cmap": build_cmap({code: new[gid] for code, gid in cmap.items()}),
        "head": _patched(font.tables["head"], (50, ">h", 1)),  # long loca (its checksum is set by write_woff)
        "hhea": _patched(font.tables["hhea"], (34, ">H", len(order))),
        "maxp": _patched(font.tables["maxp"], (4, ">H", len(order))),
        "post": struct.pack(">I", 0x00030000) + font.tables["post"][4:32],
    }
    return write_woff(tables)


def _closure(font: Font, roots: list[int]) -> list[int]:
    """The glyphs `roots` and every component they use, in glyph order (so a character's glyph keeps its rank)."""
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        gid = todo.pop()
        if gid not in seen:
            seen.add(gid)
            todo += [part for _, part in font.components(gid)]
    return sorted(seen)


def _patched(table: bytes, *fields: tuple[int, str, int]) -> bytes:
    out = bytearray(table)
    for at, fmt, value in fields:
        struct.pack_into(fmt, out, at, value)
    return bytes(out)


def build_cmap(mapping: dict[int, int]) -> bytes:
    """A cmap with a format 4 subtable (3, 1) for the BMP, when it fits in 64 KB, and a format 12 one (3, 10) for
    every character."""
    runs = _runs(mapping)
    bmp = _format4_table([run for run in runs if run[1] <= 0xFFFF])
    full = _format12_table(runs)
    subtables = ([(1, bmp)] if bmp else []) + [(10, full)]
    header = struct.pack(">HH", 0, len(subtables))
    offset = 4 + 8 * len(subtables)
    records = b""
    for encoding, table in subtables:
        records += struct.pack(">HHI", 3, encoding, offset)
        offset += len(table)
    return header + records + b"".join(table for _, table in subtables)


def _runs(mapping: dict[int, int]) -> list[tuple[int, int, int]]:
    """(first character, last character, first glyph) of each run of consecutive characters on consecutive
    glyphs."""
    runs: list[tuple[int, int, int]] = []
    for code in sorted(mapping):
        if runs and code == runs[-1][1] + 1 and mapping[code] == runs[-1][2] + code - runs[-1][0] and code != 0x10000:
            runs[-1] = (runs[-1][0], code, runs[-1][2])
        else:
            runs.append((code, code, mapping[code]))
    return runs


def _format4_table(runs: list[tuple[int, int, int]]) -> bytes:
    runs = [run for run in runs if run[1] < 0xFFFF] + [(0xFFFF, 0xFFFF, 0)]  # the closing segment maps to glyph 0
    count = len(runs)
    length = 16 + 8 * count
    if length > FORMAT4_MAX:
        return b""
    power = 1 << (count.bit_length() - 1)
    head = struct.pack(">7H", 4, length, 0, 2 * count, 2 * power, power.bit_length() - 1, 2 * (count - power))
    return (head + struct.pack(f">{count}H", *(end for _, end, _ in runs)) + b"\0\0"
            + struct.pack(f">{count}H", *(start for start, _, _ in runs))
            + struct.pack(f">{count}H", *((glyph - start) & 0xFFFF if start != 0xFFFF else 1
                                           for start, _, glyph in runs))
            + b"\0\0" * count)


def _format12_table(runs: list[tuple[int, int, int]]) -> bytes:
    return (struct.pack(">HHIII", 12, 0, 16 + 12 * len(runs), 0, len(runs))
            + b"".join(struct.pack(">III", *run) for run in runs))


def _checksum(data: bytes) -> int:
    padded = data + b"\0" * (-len(data) % 4)
    return int(sum(struct.unpack(f">{len(padded) // 4}I", padded))) & 0xFFFFFFFF


def write_woff(tables: dict[str, bytes]) -> bytes:
    """WOFF 1.0 of a TrueType font's tables (zlib at level 9 where it saves bytes); head's checkSumAdjustment is set
    as the sfnt the browser unpacks would have it (each table's checksum taken with it at 0, as the spec says)."""
    tables = {**tables, "head": _patched(tables["head"], (8, ">I", 0))}
    tags = sorted(tables)
    count = len(tags)
    sums = {tag: _checksum(tables[tag]) for tag in tags}
    power = 1 << (count.bit_length() - 1)
    sfnt_head = struct.pack(">IHHHH", 0x00010000, count, 16 * power, power.bit_length() - 1, 16 * (count - power))
    offset = 12 + 16 * count
    directory = b""
    for tag in tags:
        directory += struct.pack(">4sIII", tag.encode("latin-1"), sums[tag], offset, len(tables[tag]))
        offset += len(tables[tag]) + (-len(tables[tag]) % 4)
    whole = (_checksum(sfnt_head + directory) + sum(sums.values())) & 0xFFFFFFFF
    tables["head"] = _patched(tables["head"], (8, ">I", (0xB1B0AFBA - whole) & 0xFFFFFFFF))
    at = 44 + 20 * count
    entries, body = b"", b""
    for tag in tags:
        stored = _compressed(tables[tag])
        entries += struct.pack(">4sIIII", tag.encode("latin-1"), at + len(body), len(stored), len(tables[tag]),
                               sums[tag])
        body += stored + b"\0" * (-len(stored) % 4)
    header = struct.pack(">4sIIHHIHHIIIII", b"wOFF", 0x00010000, at + len(body), count, 0, offset, 1, 0,
                         0, 0, 0, 0, 0)
    return header + entries + body


def _compressed(data: bytes) -> bytes:
    packed = zlib.compress(data, 9)
    return packed if len(packed) < len(data) else data
