"""`analyze panel` (agreement inside a judge panel) and `analyze judge` (a report card per judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.meta.human import average_scores, load_ratings
from howtobench.meta.judge_card import card_plots, cards
from howtobench.meta.judgments import load_judgments
from howtobench.meta.panel_agreement import agreement_table, disagreements_table, panel_data
from howtobench.report.tables import print_tables

from .analyze_group import OutOpt, analyze_app, print_figures
from .options import EmptyOpt, FormatOpt, StrictOpt

FilesArg = Annotated[list[Path], typer.Argument(exists=True, dir_okay=False, help="Judgment JSONL files.")]


def panel_cmd(
    results: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False,
                                                  help="Judgment files written by `howtobench judge --panel`.")],
    top: Annotated[int, typer.Option("--top", min=0, help="How many most-disputed writings to list.")] = 10,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
    empty: EmptyOpt = "exclude",
) -> None:
    """Agreement between the judges of a panel: Krippendorff's α (interval) and ICC(2,k) per task for the root and
    every leaf, then the writings whose roots the judges disagree on most, each judge's score and reason for the
    leaf they differ on most side by side. Empty writings follow --empty (left out by default: every judge gives
    them the same floor); their count is printed."""
    data = panel_data([j for path in results for j in load_judgments(path, strict=strict)], empty)
    print_tables([agreement_table(data), disagreements_table(data, top)], fmt)


def judge_cmd(
    results: FilesArg,
    human: Annotated[Path | None, typer.Option("--human", exists=True, dir_okay=False,
                                               help="Human ratings (JSONL/CSV): agreement with people.")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap intervals.")] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates.")] = 1000,
    out: OutOpt = None,
    fmt: FormatOpt = "table",
    strict: StrictOpt = False,
) -> None:
    """A report card per judge: stability (spread over --samples draws and over repeated runs), separability
    (adjacent model pairs separated at 95%), length sensitivity (the length model's β), agreement with the other
    judges and with humans, cost per 1,000 writings. A file is a run of its judge (a panel file: of each member and
    of the panel); a judge named in several files has several runs. With --out, a figure of the cards."""
    files = {path: load_judgments(path, strict=strict) for path in results}
    people = average_scores(load_ratings(human, strict=strict)) if human is not None else None
    found = cards(files, people, seed=seed, n_boot=bootstrap)
    print_tables([c.table for c in found], fmt)
    if out is not None:
        print_figures(Console(stderr=True), card_plots(found, out))


def add_panel_commands() -> None:
    """Add `analyze panel` and `analyze judge` to the group, after the commands of cli/analyze.py (the order
    `analyze --help` lists them in); once, however often the main app is built."""
    if any(command.callback is panel_cmd for command in analyze_app.registered_commands):
        return
    analyze_app.command("panel")(panel_cmd)
    analyze_app.command("judge")(judge_cmd)
