"""`howtobench analyze ...`: the paper's analyses of writings and judgments (lengths, weights, judges).

Reads stored files only; no command here calls a model. Figures are PNG + SVG with Chinese labels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.analyze_group import OutOpt, analyze_app, print_figures
from howtobench.cli.analyze_panel import add_panel_commands
from howtobench.config import resolve_data_dir
from howtobench.meta.correlate_table import empty_note
from howtobench.meta.human import average_scores, load_ratings
from howtobench.meta.judges import (
    HUMAN,
    empty_writings,
    heatmap,
    judge_matrix,
    labelled_empty_counts,
    labelled_scores,
    matrix_table,
)
from howtobench.meta.judgments import load_judgments, load_results
from howtobench.meta.length import EMPTY_LENGTHS
from howtobench.meta.length_report import analyze_length
from howtobench.meta.weights import weight_plots, weight_sets, weight_table
from howtobench.progress import step
from howtobench.report.tables import print_tables

from .options import DataOpt, EmptyOpt, FormatOpt, NoProgressOpt, StrictOpt, TaskOpt


def register(app: typer.Typer) -> None:
    """Attach the `analyze` sub-commands to the main app (this module's, then cli/analyze_panel's)."""
    add_panel_commands()
    app.add_typer(analyze_app, name="analyze")


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
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
    empty: Annotated[
        str,
        typer.Option("--empty", help="include (default, as the paper's fits): empty writings count with output "
                     "length 0; exclude: left out. Their number is printed either way; they never have a score."),
    ] = "include",
    no_progress: NoProgressOpt = False,
) -> None:
    """Section 6.1: Pearson r (p-values, ** p<0.05, * p<0.1) among input length, output length and scores per task,
    and the pooled least-squares slope of output length on input length (paper: 1.4 Guide, 6.1 Open).
    """
    if empty not in EMPTY_LENGTHS:
        raise typer.BadParameter(f"--empty must be one of {', '.join(EMPTY_LENGTHS)}")
    err = Console(stderr=True)
    loaded = load_results(results, strict=strict) if results else None
    with step("analysing lengths and drawing figures...", not no_progress):
        report = analyze_length(resolve_data_dir(data), tasks=task, writings_files=writings, results=loaded,
                                out_dir=out, strict=strict, empty=empty)  # type: ignore[arg-type]
    print_tables(report.tables, fmt)
    print_figures(err, report.figures)


@analyze_app.command("weights")
def weights_cmd(
    results: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="ToW judgment JSONL (its negotiated weights are read).")
    ],
    node: Annotated[
        str, typer.Option("--node", help="Leaves of this node only (content, format), or 'all' for every leaf.")
    ] = "content",
    out: OutOpt = None,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Figures 3 and 6: how the negotiated edge weights are distributed per genre and leaf (one set per instruction).

    Prints min / quartiles / max per genre and leaf; with --out, writes one horizontal box plot per genre.
    """
    sets = weight_sets(load_judgments(results, strict=strict), None if node == "all" else node)
    if not sets:
        raise typer.BadParameter(f"no weights for node {node!r} in {results}", param_hint="RESULTS")
    print_tables([weight_table(sets, node)], fmt)
    if out is not None:
        print_figures(Console(stderr=True), weight_plots(sets, out, node))


@analyze_app.command("judges")
def judges_cmd(
    results: Annotated[
        list[Path],
        typer.Argument(exists=True, dir_okay=False,
                       help="Judgment JSONL files, one per judge (labelled by judge model, else method, else file)."),
    ],
    human: Annotated[
        Path | None,
        typer.Option("--human", exists=True, dir_okay=False, help="Human ratings (JSONL/CSV) to add as a row."),
    ] = None,
    task: TaskOpt = None,
    empty: EmptyOpt = "exclude",
    out: OutOpt = None,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """Appendix B.1 / Figure 4: sample-level Pearson r between judges (and humans) over the writings both scored.

    Scores of all models are concatenated into one vector per judge; empty writings are left out (--empty). With
    --out, writes the heatmap.
    """
    files = {path: load_judgments(path, strict=strict) for path in results}
    scores = labelled_scores(files, task, empty)
    if human is not None:
        scores[HUMAN] = average_scores(load_ratings(human, strict=strict))
    matrix = judge_matrix(scores)
    table = matrix_table(matrix, labelled_empty_counts(files, task))
    table.notes.append(empty_note(empty_writings(files, task), empty, "judged writings"))
    print_tables([table], fmt)
    if out is not None:
        print_figures(Console(stderr=True), heatmap(matrix, out))
