"""Matplotlib set-up shared by every figure: headless backend, a CJK font, PNG + SVG output.

Matplotlib is the `[plots]` extra (howtobench.extras): it is imported when the first figure is drawn, so the
analyses' tables (and every other command) need none of it, and a figure without it stops with one line.
Genre names are Chinese, and matplotlib's default DejaVu Sans has no CJK glyphs (they would
print as empty boxes). The font comes from the `mplfonts` package (in the same extra), which ships Noto Sans CJK
SC (SIL Open Font License) inside the wheel; a system font (Debian `fonts-noto-cjk` or `fonts-wqy-microhei`) is
used when that package is missing.
SVGs store text as paths, so they render without the font installed on the viewer's machine.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from howtobench.extras import require
from howtobench.fonts import bundled_cjk_font


@lru_cache(maxsize=1)
def pyplot() -> Any:
    """matplotlib.pyplot on the headless backend (one line naming the [plots] extra when it is missing)."""
    require("plots", "drawing figures (--out)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


SYSTEM_HINTS = ("notosanscjk", "notosans-cjk", "wqy", "sourcehansans", "simhei", "droidsansfallback")


def _system_font() -> Path | None:
    from matplotlib import font_manager

    for found in sorted(font_manager.findSystemFonts()):
        if any(h in Path(found).name.lower().replace("_", "") for h in SYSTEM_HINTS):
            return Path(found)
    return None


@lru_cache(maxsize=1)
def setup_fonts() -> str | None:
    """Register a CJK font and make it the first sans-serif choice; returns its family name (None if none)."""
    plt = pyplot()
    from matplotlib import font_manager

    path = bundled_cjk_font() or _system_font()
    if path is None:
        return None
    font_manager.fontManager.addfont(str(path))
    family = font_manager.FontProperties(fname=str(path)).get_name()
    plt.rcParams["font.family"] = "sans-serif"
    plt.rcParams["font.sans-serif"] = [family, "DejaVu Sans"]
    plt.rcParams["axes.unicode_minus"] = False  # the CJK font lacks U+2212; use '-'
    plt.rcParams["svg.fonttype"] = "path"
    return family


def new_figure(width: float = 7.0, height: float = 5.0) -> tuple[Any, Any]:
    """A figure and axes with the CJK font ready."""
    setup_fonts()
    fig, ax = pyplot().subplots(figsize=(width, height))
    return fig, ax


def save_figure(fig: Any, out_dir: Path, stem: str) -> list[Path]:
    """Write `stem`.png (150 dpi) and `stem`.svg under out_dir, close the figure, return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    fig.tight_layout()
    for path in paths:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    pyplot().close(fig)
    return paths
