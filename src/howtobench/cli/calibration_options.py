"""--calibration FILE, as `leaderboard`, `report` and `run` take it (applied by `report.calibrated.calibrated`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from howtobench.errors import ConfigError

CalibrationOpt = Annotated[Path | None, typer.Option(
    "--calibration", help="A calibration file of `howtobench calibrate`: adds the judge's scores in the reference "
    "judge's units (or the paper's, --to-paper) beside the raw ones, with the calibration's uncertainty in every "
    "interval (JSON/CSV cells with metric 'calibrated'). Refused when the judgments are not of its new judge, tree "
    "and prompts.")]



def check_run_calibration(path: Path | None, judge_model: str | None, method: str) -> None:
    """Before `run` spends anything: a calibration fitted for another judge model or method stops it in one line
    (the tree and prompt hashes are checked on the judgments, when the leaderboard is built)."""
    if path is None:
        return
    from howtobench.calibration.record import load_calibration

    cal = load_calibration(path)
    for what, got, want in (("judge", judge_model, cal.new.model), ("method", method, cal.new.method)):
        if got != want:
            raise ConfigError(f"--calibration {path} is for {what} {want!r}, this run's is {got!r}")
