"""--calibration FILE, as `leaderboard`, `report` and `run` take it (howtobench.calibration)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from howtobench.data.models import Item
from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import Leaderboard

CalibrationOpt = Annotated[Path | None, typer.Option(
    "--calibration", help="A calibration file of `howtobench calibrate`: adds the judge's scores in the reference "
    "judge's units (or the paper's, --to-paper) beside the raw ones, with the calibration's uncertainty in every "
    "interval (JSON/CSV cells with metric 'calibrated'). Refused when the judgments are not of its new judge, tree "
    "and prompts.")]


def calibrated(board: Leaderboard, judgments: Sequence[Judgment], path: Path | None,
               items: Sequence[Item] | None = None) -> Leaderboard:
    """`board` with the calibrated cells of the calibration file at `path` (unchanged when None)."""
    if path is None:
        return board
    from howtobench.calibration.board import with_calibration
    from howtobench.calibration.record import load_calibration

    return with_calibration(board, judgments, load_calibration(path), path, items)
