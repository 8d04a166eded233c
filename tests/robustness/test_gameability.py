"""Gameability: padding's raw and length-controlled score change, on judgments made by hand and in the suite."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from howtobench.judges.base import Judgment
from howtobench.robustness.gameability import gameability_table, length_beta
from howtobench.robustness.suite import SuiteConfig, run_suite
from howtobench.steps.settings import Execution


def quiet(workspace: Path) -> Execution:
    """Live calls on `workspace`, no progress bar."""
    return Execution(workspace=workspace, progress=False)


def _j(model: str, item: str, score: float, chars: int) -> Judgment:
    return Judgment(method="tow", item_id=item, model=model, task="open", genre="p", score=score,
                    writing_chars=chars, reference_chars=100)


def test_a_judge_paid_for_length_raw_rises_controlled_does_not() -> None:
    """Scores are 5 + 2·ln(chars / 100) for every writing, padded or not: the fit on the originals finds β = 2
    exactly (task effects: one writing per item), padding by ×1.5 raises the raw score by 2·ln 1.5 and leaves the
    controlled score where it was."""
    lengths = {"i1": 80, "i2": 120, "i3": 200, "i4": 50}
    originals = [_j("m", item, 5 + 2 * math.log(n / 100), n) for item, n in lengths.items()]
    padded = [_j("m+pad", item, 5 + 2 * math.log(1.5 * n / 100), round(1.5 * n)) for item, n in lengths.items()]
    beta = length_beta(originals, "exclude")
    assert beta.effects == "task" and beta.beta == pytest.approx(2.0)
    table = gameability_table({"tow": {"original": originals, "pad": padded}}, ["pad"], n_boot=0)
    assert table is not None
    row = dict(zip(table.columns, table.rows[0], strict=True))
    assert row["β (length)"] == "+2.000" and row["fit"] == "task effects, 4 writings"
    assert row["pad × length"] == "1.50" and row["pad n"] == 4
    assert row["pad raw Δ"] == f"{2 * math.log(1.5):+.2f}▲"
    assert row["pad controlled Δ"] in ("+0.00", "-0.00")


def test_no_padding_kind_no_table() -> None:
    assert gameability_table({"tow": {"original": []}}, ["drop"]) is None


async def test_suite_with_pad_and_repeat_adds_the_table(tmp_path: Path) -> None:
    data_root = Path(os.environ.get("HOWTOBENCH_DATA", "/work/shared/howtobench-data"))
    config = SuiteConfig(methods=("bleu",), kinds=("pad", "repeat"), n=6, per_model=2, seed=0, tasks=("open",),
                         n_boot=50)
    table = await run_suite(config, data_root=data_root, run_dir=tmp_path / "run", execution=quiet(tmp_path / "ws"))
    assert table.gameability is not None
    row = dict(zip(table.gameability.columns, table.gameability.rows[0], strict=True))
    assert row["method"] == "bleu" and row["pad n"] == 6 and row["repeat n"] == 6
    assert float(row["pad × length"]) > 1 and float(row["repeat × length"]) > 1
