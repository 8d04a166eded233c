"""The CJK font the package ships (through its `mplfonts` dependency: Noto Sans CJK SC), for the places that draw
Chinese on a machine that may have no CJK font: the figures of `meta`/`analyze`, and the rating app, which serves it
to the rater's browser. The HTML report embeds no font (it would weigh 16 MB) and says it uses the system's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BUNDLED_FONT = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")
REPORT_FONT_NOTE = ("Chinese text on this page is drawn with this computer's fonts (Noto Sans CJK SC, PingFang SC, "
                    "Microsoft YaHei, ...); the page embeds none, to stay small. Where Chinese shows as boxes, install "
                    "a CJK font such as Noto Sans CJK.")


def bundled_cjk_font() -> Path | None:
    """The font file inside the installed mplfonts package, found without importing it (None if it is missing)."""
    spec = importlib.util.find_spec(BUNDLED_FONT[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FONT[1]
    return path if path.is_file() else None
