"""The `analyze` command group and what its commands share (the figures folder option, the line that says where
the figures went): the commands live in cli/analyze.py and cli/analyze_panel.py, both importing this, so neither
imports the other."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import command_group
from howtobench.extras import require

analyze_app = command_group(
    "analyze",
    "Analyses of writings and stored judgments: length effects, edge weights, judge-vs-judge agreement.",
)



def _figures_need_plots(out: Path | None) -> Path | None:
    """Figures need the [plots] extra: said when the flag is read, before any analysis runs."""
    if out is not None:
        require("plots", "--out (figures)")
    return out


OutOpt = Annotated[
    Path | None,
    typer.Option("-o", "--out", file_okay=False, callback=_figures_need_plots,
                 help="Folder for the figures (PNG + SVG; needs the [plots] extra); no figures without it."),
]


def print_figures(console: Console, figures: list[Path]) -> None:
    """One line: how many figures were written, and where."""
    pngs = [p for p in figures if p.suffix == ".png"]
    if pngs:
        console.print(f"wrote {len(pngs)} figure(s) (PNG + SVG) to {pngs[0].parent}", highlight=False)
