"""`howtobench report`: one self-contained HTML page from judgment files or a run directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.calibration_options import CalibrationOpt
from howtobench.cli.length_options import LengthAnchorOpt, LengthControlOpt, LengthSlopesOpt
from howtobench.cli.options import EMPTY_HELP
from howtobench.cli.params import bundled
from howtobench.config import resolve_data_dir
from howtobench.judges.base import EmptyConvention
from howtobench.report.html import ReportOptions, default_report_path, write_report
from howtobench.report.html_explorer import DEFAULT_LIMIT
from howtobench.report.length_control import length_controlled

SourcesArg = Annotated[
    list[Path],
    typer.Argument(
        help="Judgment JSONL files (from `howtobench judge`, any method) and/or one run directory of "
        "`howtobench run` (its judgments/, writings/ and manifest.json are read).",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class Page:
    """Where `report` writes its page and what the page shows, as its flags give it (each field is its flag; None:
    as the run directory recorded it, else the default its help names; those nobody else takes are declared here)."""

    output: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="The HTML file to write. Default: report.html inside the run directory when "
                     "one is given, else ./report.html.", show_default=False),
    ] = None
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Benchmark root: shows each instruction and the shipped writings in the explorer and takes genres "
            "from the data. Default: the folder a run directory's manifest names, else $HOWTOBENCH_DATA, else the "
            "per-user cache when `howtobench data download` filled it, else none.",
        ),
    ] = None
    writings: Annotated[
        list[Path] | None,
        typer.Option(
            "--writings",
            exists=True,
            dir_okay=False,
            help="Writings JSONL (infer_id, model, output per line), e.g. the file given to `judge --writings`: the "
            "explorer shows its texts (before a run directory's and the release's). A file none of whose writings was "
            "judged is an error. Repeatable.",
        ),
    ] = None
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="Seed of the bootstrap intervals. Default: the run's seed, else 0."),
    ] = None
    bootstrap: Annotated[
        int | None,
        typer.Option("--bootstrap", min=0,
                     help="Bootstrap replicates (0 = no intervals). Default: the run's, else 1000."),
    ] = None
    paper: Annotated[
        bool | None,
        typer.Option(
            "--paper/--no-paper",
            help="Add the paper's Table 4 ToW scores as reference columns. Default: as the run asked, else off.",
        ),
    ] = None
    explorer: Annotated[
        int,
        typer.Option(
            "--explorer",
            min=0,
            help="Items in the judgment explorer (those with a failed or empty judgment first); 0 = every item "
            "(a full benchmark run makes a page of tens of megabytes).",
        ),
    ] = DEFAULT_LIMIT
    title: Annotated[str | None, typer.Option("--title", help="Page title. Default: the run's name.")] = None
    empty: Annotated[
        EmptyConvention | None,
        typer.Option("--empty", help=EMPTY_HELP + " Default: as the run recorded it (its config.yaml), else exclude."),
    ] = None
    length_control: LengthControlOpt = False
    length_anchor: LengthAnchorOpt = None
    length_slopes: LengthSlopesOpt = None
    calibration: CalibrationOpt = None

    def options(self) -> ReportOptions:
        """The report's options (the data folder resolved when --data is given)."""
        slopes = self.length_slopes.value if self.length_slopes else None
        return ReportOptions(
            data_dir=resolve_data_dir(self.data) if self.data is not None else None, seed=self.seed,
            n_boot=self.bootstrap, paper=self.paper, explorer_limit=self.explorer, title=self.title,
            empty=self.empty,
            length_control=length_controlled(self.length_control, self.length_anchor is not None, slopes),
            writings=tuple(self.writings or ()), calibration=self.calibration, length_anchor=self.length_anchor,
            length_slopes=slopes)


AS_RECORDED = Page()
"""The default of `report`'s `page` parameter (what the flags' defaults make)."""


@bundled("page", Page)
def report(sources: SourcesArg, page: Page = AS_RECORDED) -> None:
    """Write one self-contained HTML page of judgment files or a run directory.

    It shows the leaderboard with 95% intervals and failure counts (empty
    writings left out of the means and counted, as the authors did: --empty),
    a genre × model heatmap, the node breakdown, failure rates per leaf,
    the run's manifest (endpoints without keys, hashes, tokens and cost),
    and a judgment explorer: each writing, every leaf's score and reason.

    Model and user text is HTML-escaped; the page loads nothing from the
    network and calls no model. Given a run directory, the page is written
    into it (RUN_DIR/report.html) unless -o says otherwise; the path is printed.
    """
    path = write_report(sources, page.output or default_report_path(sources), page.options())
    size = path.stat().st_size
    Console(soft_wrap=True).print(f"wrote {path} ({size / 1024:,.0f} KiB)", highlight=False)  # a path unbroken


def register(app: typer.Typer) -> None:
    app.command("report")(report)
