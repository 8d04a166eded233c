"""`howtobench analyze ...`: the paper's analyses of writings and judgments (lengths, weights, judges).

Reads stored files only; no command here calls a model. Figures are PNG + SVG with Chinese labels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.config import resolve_data_dir
from howtobench.meta.judgments import load_results
from howtobench.meta.length_report import analyze_length
from howtobench.report.tables import print_tables

from .options import DataOpt, FormatOpt, StrictOpt, TaskOpt

analyze_app = typer.Typer(
    name="analyze",
    help="Analyses of writings and stored judgments: length effects, edge weights, judge-vs-judge agreement.",
    no_args_is_help=True,
)

OutOpt = Annotated[
    Path | None,
    typer.Option("--out", file_okay=False, help="Folder for the figures (PNG + SVG); no figures without it."),
]


def register(app: typer.Typer) -> None:
    """Attach the `analyze` sub-commands to the main app."""
    app.add_typer(analyze_app, name="analyze")


def _print_figures(console: Console, figures: list[Path]) -> None:
    pngs = [p for p in figures if p.suffix == ".png"]
    if pngs:
        console.print(f"wrote {len(pngs)} figures (PNG + SVG) to {pngs[0].parent}", highlight=False)


@analyze_app.command("length")
def length_cmd(
    data: DataOpt = None,
    results: Annotated[
        list[Path] | None,
        typer.Option("--results", exists=True, dir_okay=False,
                     help="Judgment JSONL whose overall and content scores join the analysis; repeatable."),
    ] = None,
    writings: Annotated[
        list[Path] | None,
        typer.Option("--writings", exists=True, dir_okay=False,
                     help="Writing JSONL files to analyse instead of the release's writings; repeatable."),
    ] = None,
    task: TaskOpt = None,
    out: OutOpt = None,
    fmt: FormatOpt = "rich",
    strict: StrictOpt = False,
) -> None:
    """Section 6.1: Pearson r (p-values, ** p<0.05, * p<0.1) among input length, output length and scores per task,
    and the pooled least-squares slope of output length on input length (paper: 1.4 Guide, 6.1 Open).
    """
    err = Console(stderr=True)
    loaded = load_results(results, strict=strict) if results else None
    with err.status("analysing lengths and drawing figures..."):
        report = analyze_length(resolve_data_dir(data), tasks=task, writings_files=writings, results=loaded,
                                out_dir=out, strict=strict)
    print_tables(report.tables, fmt)
    _print_figures(err, report.figures)
