"""Gameability: padding's raw and length-controlled score change, on judgments made by hand and in the suite."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
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
    """Scores are 5 + 2·ln(chars / 100) for every writing, padded or not: the pairs give β = 2 exactly (as does the
    fit on the originals, with task effects: one writing per item), padding by ×1.5 raises the raw score by
    2·ln 1.5 and leaves the controlled score where it was."""
    lengths = {"i1": 80, "i2": 120, "i3": 200, "i4": 50}
    originals = [_j("m", item, 5 + 2 * math.log(n / 100), n) for item, n in lengths.items()]
    padded = [_j("m+pad", item, 5 + 2 * math.log(1.5 * n / 100), round(1.5 * n)) for item, n in lengths.items()]
    beta = length_beta(originals, "exclude")
    assert beta.effects == "task" and beta.beta == pytest.approx(2.0)
    table = gameability_table({"tow": {"original": originals, "pad": padded}}, ["pad"], n_boot=0)
    assert table is not None
    row = dict(zip(table.columns, table.rows[0], strict=True))
    assert row["β from the pairs (used)"] == "+2.000 (4 pairs)"
    assert row["β observational (check)"] == "+2.000" and row["fit"] == "task effects, 4 writings"
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


def test_slope_comes_from_the_pairs_when_the_sample_shares_no_items() -> None:
    """One writing per item and model, quality rising with length across models (an association of 1.5 on top of
    the judge's true slope of 1.0): the observational fit with task effects is off; the pairs give 1.0 and the
    controlled change is zero."""
    rng = np.random.default_rng(0)
    originals, padded = [], []
    for k in range(60):
        model = f"m{k % 3}"
        chars = int(100 * math.exp(rng.normal(-0.5 + 0.4 * (k % 3), 0.4)))
        quality = 1.5 * math.log(chars / 100)  # better writers write longer: not the judge's bias
        originals.append(_j(model, f"i{k}", 5 + quality + math.log(chars / 100), chars))
        padded.append(_j(f"{model}+pad", f"i{k}", 5 + quality + math.log(1.4 * chars / 100), round(1.4 * chars)))
    table = gameability_table({"tow": {"original": originals, "pad": padded}}, ["pad"], n_boot=0)
    row = dict(zip(table.columns, table.rows[0], strict=True))  # type: ignore[union-attr]
    below, above = (float(v) for v in re.findall(r"[+-]\d\.\d+", row["β from the pairs (used)"]))
    assert below == pytest.approx(1.0, abs=0.02) and above == pytest.approx(1.0, abs=0.02)  # chars are rounded
    assert abs(float(row["β observational (check)"]) - 1.0) > 0.3
    assert abs(float(row["pad controlled Δ"].rstrip("▲*"))) < 0.005


def test_a_judge_paying_only_above_the_reference_keeps_at_most_a_third_after_control() -> None:
    """Reward 2 per unit ln ratio above the reference, nothing below (80% of writings are below): the pairs learn
    both slopes, and padding keeps at most a third of its raw gain (it kept +0.46 of +0.67 with one pooled β)."""
    rng = np.random.default_rng(1)
    originals, padded = [], []
    for k in range(300):
        chars = int(100 * math.exp(rng.normal(-0.5, 0.6)))
        quality = float(rng.normal(0, 0.5))

        def judge(n: int, q: float = quality) -> float:
            return 5 + q + 2.0 * max(math.log(n / 100), 0.0) + float(rng.normal(0, 0.2))

        originals.append(_j("m", f"i{k}", judge(chars), chars))
        padded.append(_j("m+pad", f"i{k}", judge(round(2 * chars)), round(2 * chars)))
    table = gameability_table({"tow": {"original": originals, "pad": padded}}, ["pad"], n_boot=0)
    row = dict(zip(table.columns, table.rows[0], strict=True))  # type: ignore[union-attr]
    raw = float(row["pad raw Δ"].rstrip("▲*").split(" ")[0])
    controlled = float(row["pad controlled Δ"].rstrip("▲*").split(" ")[0])
    assert raw > 0.3 and controlled <= raw / 3
    assert "above the reference" in row["β from the pairs (used)"]
