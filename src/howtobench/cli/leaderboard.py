"""`howtobench leaderboard`: the paper's Table 4 shape from judgment files of any method."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from howtobench.cli.calibration_options import CalibrationOpt
from howtobench.cli.length_options import (
    LengthAnchorOpt,
    LengthControlOpt,
    LengthSlopes,
    LengthSlopesOpt,
    WritingsOpt,
    length_sources,
)
from howtobench.cli.options import EmptyOpt, FormatOpt, NoProgressOpt
from howtobench.cli.params import bundled
from howtobench.config import optional_data_dir
from howtobench.data.loader import load_items
from howtobench.data.models import Item
from howtobench.data.paper import paper_table4
from howtobench.judges.base import Judgment
from howtobench.outputs import output_file, write_text_atomic
from howtobench.progress import step
from howtobench.report.calibrated import calibrated_leaderboard
from howtobench.report.html_inputs import find_sources
from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions, load_judgments
from howtobench.report.length_control import length_controlled
from howtobench.report.render import board_document
from howtobench.report.tables import render, show


class By(StrEnum):
    both = "both"
    task = "task"
    genre = "genre"


def _items_for(data: Path | None, judgments: list[Judgment]) -> list[Item] | None:
    root = optional_data_dir(data)
    if root is None:
        return None
    tasks = sorted({j.task for j in judgments})
    return load_items(root, tasks)


ResultsArg = Annotated[
    list[Path], typer.Argument(help="Judgment JSONL files written by `howtobench judge` (any method), or a run "
                                 "directory of `howtobench run` (its judgments/*.jsonl).")
]


class Order(StrEnum):
    means = "means"
    shared = "shared"


@dataclass(frozen=True)
class Board:
    """What `leaderboard` tabulates and where it goes, as its flags give it (each field is its flag; those
    nobody else takes are declared here)."""

    by: Annotated[
        By, typer.Option("--by", help="Rows: both = tasks and genres (Table 4), task, or genre. All is always shown.")
    ] = By.both
    nodes: Annotated[
        bool, typer.Option("--nodes", help="Also tabulate each tree node (content / format / impression).")
    ] = False
    fmt: FormatOpt = "table"
    paper: Annotated[
        bool, typer.Option("--paper", help="Add the paper's Table 4 ToW scores (GPT-4o judge) as reference columns.")
    ] = False
    seed: Annotated[int, typer.Option("--seed", min=0,
                                      help="Seed of the bootstrap resampling (same seed, same intervals).")] = 0
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates for the 95% intervals; 0 = no intervals.")
    ] = 1000
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Benchmark root: genres from the data, and a count of items never judged. "
                     "Default: $HOWTOBENCH_DATA, else the per-user cache when `howtobench data download` filled it."),
    ] = None
    title: Annotated[str, typer.Option("--title", help="Heading printed above the tables.")] = "Leaderboard"
    order: Annotated[
        Order,
        typer.Option(
            "--order",
            help="means (default, as Table 4): models ordered by their All mean, each over its own scored items; an "
            "adjacent pair whose paired difference on shared items has the other sign is flagged. shared: ordered "
            "by the mean over the items every model has a score for (their number is printed).",
        ),
    ] = Order.means
    empty: EmptyOpt = "exclude"
    length_control: LengthControlOpt = False
    length_anchor: LengthAnchorOpt = None
    length_slopes: LengthSlopesOpt = LengthSlopes.pooled
    writings: WritingsOpt = None
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option("--compare", metavar="A B", show_default=False,
                     help="Two models (columns) to compare: A − B on the items both have a score for, with its paired "
                     "bootstrap 95% interval and Wilcoxon p."),
    ] = None
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="Compare every model with this one (paired on shared items, interval and p); "
                     "each model's closing line reads 'vs BASELINE'."),
    ] = None
    calibration: CalibrationOpt = None
    output: Annotated[Path | None, typer.Option("-o", "--out",
                                                help="Write to this file instead of the terminal.")] = None
    no_progress: NoProgressOpt = False

    def build(self, judgments: list[Judgment]) -> Leaderboard:
        """The leaderboard of `judgments` these flags ask for."""
        slopes = (self.length_slopes or LengthSlopes.pooled).value
        controlled = length_controlled(self.length_control, self.length_anchor is not None, slopes)
        lengths = length_sources(judgments, self.data, self.writings) if controlled else None
        anchor = load_judgments([self.length_anchor]) if self.length_anchor is not None else ()
        return calibrated_leaderboard(judgments, LeaderboardOptions(
            by=self.by.value, nodes=self.nodes, seed=self.seed, n_boot=self.bootstrap,
            items=_items_for(self.data, judgments), paper=paper_table4() if self.paper else None, title=self.title,
            order=self.order.value, empty=self.empty, length_controlled=controlled, lengths=lengths,
            compare=self.compare, baseline=self.baseline, length_anchor=anchor, length_slopes=slopes),
            self.calibration)

    def publish(self, board: Leaderboard) -> None:
        """Print the leaderboard in --format, or write it to --out."""
        doc = board_document(board)
        if self.output:
            write_text_atomic(output_file(self.output), render(doc, self.fmt))
        else:
            show(doc, self.fmt)


DEFAULT_BOARD = Board()
"""The default of `leaderboard`'s `board` parameter (what the flags' defaults make)."""


@bundled("board", Board)
def leaderboard(results: ResultsArg, board: Board = DEFAULT_BOARD) -> None:
    """Rows Completion / Guide / Open, each genre and All; columns the models ordered by All (see --order).

    Cells are mean root scores with seeded bootstrap 95% intervals (items resampled); failed judgments are
    counted and left out of the means, never scored as 0; empty writings are left out of the means and counted,
    as the authors did (--empty lowest scores them instead). Adjacent models are compared on shared items (mean
    difference with a paired-bootstrap interval, Wilcoxon signed-rank p-value); a pair whose shared items say the
    opposite of the order is flagged. --compare A B and --baseline X add the paired differences asked for. The
    table ends with one line per model: All with its interval and n, the judge, the rank, and its comparison.
    """
    with step(f"reading judgments, bootstrapping {board.bootstrap} replicates per cell", not board.no_progress):
        result = board.build(load_judgments(find_sources(results).judgment_files))  # a run directory: its judgments
    board.publish(result)


def register(app: typer.Typer) -> None:
    app.command("leaderboard")(leaderboard)
