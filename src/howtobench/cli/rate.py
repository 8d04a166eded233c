"""`howtobench rate ...`: collect human ratings in a local web app, then export them for `meta`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from howtobench.cli.help_groups import command_group
from howtobench.config import resolve_data_dir
from howtobench.event_loop import run as run_async
from howtobench.rate.server import DEFAULT_HOST, DEFAULT_PORT, exposure_warning, serve
from howtobench.rate.study import open_study, prepare_study
from howtobench.report.tables import print_tables

from .options import DataOpt, FormatOpt

rate_app = command_group(
    "rate",
    "Collect human ratings of writings in a local web app (the paper's MetaEditor protocol by default), "
    "then export them for `meta correlate` / `meta agreement`.",
)

StudyOpt = Annotated[
    Path,
    typer.Option("--study", file_okay=False, help="Study folder: holds study.sqlite with the writings shown and every "
                 "rating (created on the first `rate serve`)."),
]


def register(app: typer.Typer) -> None:
    """Attach the `rate` sub-commands to the main app."""
    app.add_typer(rate_app, name="rate")


def _say(line: str) -> None:
    print(line, flush=True)


@rate_app.command("serve")
def serve_cmd(
    study: StudyOpt,
    writings: Annotated[
        list[Path] | None,
        typer.Option("--writings", exists=True, dir_okay=False, help="Writings to rate (JSONL: infer_id or item_id, "
                     "model, output or text); repeatable. Needed to create a study; when given again they must "
                     "match it. Bad rows stop the command before the server starts, each named as file:line."),
    ] = None,
    data: DataOpt = None,
    mode: Annotated[
        str | None,
        typer.Option("--mode", help="metaeditor (default; the paper's protocol: 1-5 with the reference as 4, an "
                     "error type below 3) or tow (every ToW leaf on its own scale with its criteria, plus an "
                     "overall 1-10). Fixed when the study is created."),
    ] = None,
    raters_per_writing: Annotated[
        int | None,
        typer.Option("--raters-per-writing", min=1, help="Raters who rate each writing (default 2, as in the paper)."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0,
                     help="Seed of the order of instructions and of responses A, B, C... (default 0)."),
    ] = None,
    tree: Annotated[
        str | None,
        typer.Option("--tree", help="ToW mode: the tree whose leaves are rated (a bundled name or a YAML file; "
                     "default: the paper's tree)."),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on. The default keeps the app on this "
                                      "machine; any other address lets others on the network sign in.")]
    = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free port).")] = DEFAULT_PORT,
) -> None:
    """Start the rating app for a study (created from --writings the first time).

    Raters sign in by name and rate one instruction at a time: its writings as anonymous responses A, B, C...
    next to the instruction, its grounding and the reference. Each rating is committed to the study folder the
    moment it is made, so closing the tab or stopping the server loses nothing.
    """
    asked: dict[str, Any] = {k: v for k, v in (("mode", mode), ("raters_per_writing", raters_per_writing),
                                                 ("seed", seed), ("tree", tree)) if v is not None}
    opened = prepare_study(study, tuple(writings or ()), resolve_data_dir(data), asked)
    warning = exposure_warning(host)
    if warning:
        Console(stderr=True).print(warning, style="yellow", highlight=False, markup=False)
    try:
        run_async(serve(opened, host, port, _say))
    except KeyboardInterrupt:  # pragma: no cover - signal handlers normally catch it
        pass
    finally:
        opened.close()


@rate_app.command("export")
def export_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("-o", "--out", dir_okay=False, help="Ratings JSONL to write (replaced).")],
) -> None:
    """Write the study's complete ratings as the JSONL `meta correlate --human` and `meta agreement` read."""
    from howtobench.rate.export import export_study  # scipy via meta: only the commands that need it wait for it

    opened = open_study(study)
    try:
        summary = export_study(opened, out)
    finally:
        opened.close()
    typer.echo(f"wrote {summary.ratings} ratings by {summary.raters} raters of {summary.writings} writings to {out}")
    if summary.incomplete:
        typer.echo(f"not exported: {summary.incomplete} incomplete ratings (no score yet, or a ToW leaf missing)",
                   err=True)
    if summary.short_of_raters:
        typer.echo(f"note: {summary.short_of_raters} writings have fewer than {opened.settings.raters_per_writing} "
                   "complete ratings", err=True)


@rate_app.command("status")
def status_cmd(study: StudyOpt, fmt: FormatOpt = "table") -> None:
    """Per-rater progress and the running agreement (the measures `meta agreement` computes)."""
    from howtobench.rate.export import agreement_table, progress_table

    opened = open_study(study)
    try:
        tables = [progress_table(opened), agreement_table(opened)]
    finally:
        opened.close()
    print_tables(tables, fmt)
    sys.stdout.flush()
