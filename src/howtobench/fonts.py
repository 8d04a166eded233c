"""The CJK font the [plots] extra ships (through its `mplfonts` dependency: Noto Sans CJK SC), for the figures of
`meta`/`analyze` on a machine that may have no CJK font. The HTML report and the rating app do not use it: they use the
core package's own subset (assets/cjk-sc-subset.woff; howtobench.report.font, howtobench.rate.app)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BUNDLED_FONT = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")


def bundled_cjk_font() -> Path | None:
    """The font file inside the installed mplfonts package, found without importing it (None if it is missing)."""
    spec = importlib.util.find_spec(BUNDLED_FONT[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FONT[1]
    return path if path.is_file() else None
