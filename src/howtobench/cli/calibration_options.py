"""--calibration FILE, as `leaderboard`, `report` and `run` take it (applied by `calibration.board.calibrated`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

CalibrationOpt = Annotated[Path | None, typer.Option(
    "--calibration", help="A calibration file of `howtobench calibrate`: adds the judge's scores in the reference "
    "judge's units (or the paper's, --to-paper) beside the raw ones, with the calibration's uncertainty in every "
    "interval (JSON/CSV cells with metric 'calibrated'). Refused when the judgments are not of its new judge, tree "
    "and prompts.")]

