"""The CJK fonts: the core package's own subset (`CORE_CJK_FONT`: the HTML report embeds glyphs from it, the rating
app serves it whole), and the one the [plots] extra ships (through its `mplfonts` dependency: Noto Sans CJK SC) for
the figures of `meta`/`analyze` on a machine that may have no CJK font."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from importlib import resources
from pathlib import Path

CORE_CJK_FONT = "assets/cjk-sc-subset.woff"
"""Package data: Noto Sans CJK SC cut to GB2312, CJK punctuation and the benchmark's characters (WOFF 1.0, 1.4 MiB;
built by `scripts/build-font-subset`; SIL Open Font License, text beside it)."""



@lru_cache(maxsize=1)
def core_cjk_font() -> bytes:
    """The bytes of `CORE_CJK_FONT`, read once per process (a report cuts pages from it, the rating app serves it)."""
    return resources.files("howtobench").joinpath(CORE_CJK_FONT).read_bytes()


BUNDLED_FONT = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")


def bundled_cjk_font() -> Path | None:
    """The font file inside the installed mplfonts package, found without importing it (None if it is missing)."""
    spec = importlib.util.find_spec(BUNDLED_FONT[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FONT[1]
    return path if path.is_file() else None
