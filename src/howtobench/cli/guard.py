"""`howtobench guard FILES...`: what the guard's rules would flag in writings or judgments, per model and task.

Without FILES, the writings of the benchmark at --data (the release: its 13,020 writings of the paper's ten models).
The guard's options (`--guard-threshold`, `--guard-action`, `--guard-cliches`) are the ones `serve`, `judge` and
`run` take, so a threshold tried here is set there the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from howtobench.cli.guard_options import GuardActionOpt, GuardClichesOpt, GuardThresholdOpt, guard_settings
from howtobench.cli.options import DataOpt, FormatOpt
from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items
from howtobench.data.models import TASKS
from howtobench.data.rows import is_judgments_file
from howtobench.errors import DataError
from howtobench.guard.guard import Guard
from howtobench.meta.guard_survey import Survey, survey_judgments, survey_tables, survey_writings
from howtobench.report.tables import print_tables


def release_files(root: Path) -> list[Path]:
    """Every `<task>/inferences/*.jsonl` of the benchmark at `root`."""
    files = [f for task in TASKS for f in sorted((root / task / "inferences").glob("*.jsonl"))]
    if not files:
        raise DataError(f"no writings under {root}/<task>/inferences: give FILES, or --data with the release")
    return files


def guard(
    files: Annotated[list[Path] | None, typer.Argument(help="Writings (JSONL: infer_id, model, output) or "
                                                          "judgments (JSONL, judged with --guard). Default: the "
                                                          "release's writings under --data.")] = None,
    data: DataOpt = None,
    threshold: GuardThresholdOpt = None,
    action: GuardActionOpt = None,
    cliches: GuardClichesOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """Print each guard signal's distribution and how many writings each rule would flag (and `--guard skip`
    skip), in all and per model and task, so thresholds can be set on your own data before a run."""
    checker = Guard(guard_settings("flag", threshold, action, cliches))
    found = Survey(checker.rules)
    writings = [f for f in files or [] if not is_judgments_file(f)]
    for path in files or []:
        if path not in writings:
            survey_judgments(path, found)
    if writings or not files:
        root = resolve_data_dir(data)
        items = {item.id: item for item in load_items(root)}
        survey_writings(writings or release_files(root), items, checker, found)
    print_tables(survey_tables(found), fmt)


def register(app: typer.Typer) -> None:
    app.command("guard")(guard)
