"""Negotiation inconsistency delta / sigma on hand-computed trials."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from meta_helpers import sampled, write_jsonl

from howtobench.errors import DataError, RowError
from howtobench.judges.base import SampleResult
from howtobench.meta.inconsistency import (
    WeightSample,
    autoplan_trials,
    detect_kind,
    load_weight_samples,
    summarize,
    tow_weight_samples,
    weight_sample_line,
    weight_trials,
)
from howtobench.meta.judgments import SkipReport


def _weights_file(tmp_path: Path) -> Path:
    lines = [
        weight_sample_line("A", 1, {"a": 0.6, "b": 0.4}),
        weight_sample_line("A", 0, {"a": 0.5, "b": 0.5}),  # out of order on purpose: sample 0 is the reference
        weight_sample_line("A", 2, {"a": 0.4, "b": 0.6}),
        '{"item_id": "B", "sample": 0, "weights": {"content": {"a": 0.3, "b": 0.7}}}\n',  # nested by node
        weight_sample_line("B", 1, {"a": 0.3, "b": 0.7}),
        '{"item_id": "C", "sample": 0}\n',
        weight_sample_line("D", 0, {"a": 1.0}),  # a single trial: nothing to compare
    ]
    path = tmp_path / "weights.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_weight_samples_delta_sigma(tmp_path: Path) -> None:
    path = _weights_file(tmp_path)
    with pytest.raises(RowError, match=r":6: not a weight sample"):
        load_weight_samples(path, strict=True)
    report = SkipReport()
    samples = load_weight_samples(path, report=report)
    assert report.count == 1 and samples[3] == WeightSample(item_id="B", sample=0, weights={"a": 0.3, "b": 0.7})
    trials, skipped = weight_trials(samples)
    assert skipped == 1
    result = summarize(trials, skipped)
    # A: each leaf delta = 0.1 + 0.1, sigma = sqrt((0.01 + 0 + 0.01) / (3 - 1)) = 0.1; B: 0 and 0
    assert result.delta == pytest.approx(0.2 / 2)
    assert result.sigma == pytest.approx(0.1 / 2) and result.sigma_formula == "sample"
    assert result.units == 2 and result.trials == 3 and result.skipped_units == 1
    assert result.per_leaf["a"] == pytest.approx((0.1, 0.1 / 2, 2))
    literal = summarize(trials, skipped, sigma="literal")  # the formula as printed: no divisor
    assert literal.sigma == pytest.approx(math.sqrt(0.02) / 2) and literal.delta == result.delta
    assert summarize(trials, skipped, sigma="population").sigma == pytest.approx(math.sqrt(0.02 / 3) / 2)
    with pytest.raises(ValueError, match="sigma formula"):
        summarize(trials, sigma="n-2")
    assert detect_kind(path) == "weights"


def test_autoplan_shares(tmp_path: Path) -> None:
    j = sampled("i", "m", [5.0, 10.0, None], leaves=[{"x": 5.0, "y": 2.5, "z": 1.0}, {"x": 5.0, "y": 5.0}, {"x": 1.0}])
    j.samples.append(SampleResult(index=3, score=0.0))  # S = 0 cannot give shares: left out
    single = sampled("i", "n", [5.0], leaves=[{"x": 5.0}])
    trials, skipped = autoplan_trials([j, single])
    assert skipped == 0 and trials[0].leaves == ["x", "y"]
    result = summarize(trials)
    # x: shares 1.0 then 0.5 -> delta 0.5, sample sigma sqrt(2 * 0.25^2 / 1); y: 0.5, 0.5 -> 0, 0
    assert result.delta == pytest.approx(0.25)
    assert result.sigma == pytest.approx(0.25 * math.sqrt(2) / 2)
    assert detect_kind(write_jsonl(tmp_path / "ap.jsonl", [j])) == "autoplan"


def test_nothing_to_measure_is_an_error() -> None:
    with pytest.raises(DataError, match="nothing to measure"):
        summarize([])


def test_tow_judgments_with_sampled_weights(tmp_path: Path) -> None:
    from meta_helpers import judgment

    sampled_weights = [{"a": 0.5, "b": 0.5}, {"a": 0.6, "b": 0.4}, {"a": 0.4, "b": 0.6}]
    js = [judgment("A", m, 5.0, meta={"sample_weights": sampled_weights}) for m in ("x", "y")]  # once per item
    js.append(judgment("B", "x", 5.0, meta={"sample_weights": [{"a": 1.0}]}))  # one sample: nothing to compare
    path = write_jsonl(tmp_path / "tow.jsonl", js)
    assert detect_kind(path) == "tow"
    trials, skipped = weight_trials(tow_weight_samples(js))
    result = summarize(trials, skipped)
    assert result.units == 1 and result.delta == pytest.approx(0.2) and result.sigma == pytest.approx(0.1)


def test_autoplan_position_matching() -> None:
    # the judge renamed its first aspect between samples: by name only 'y' is shared, by position both are
    j = sampled("i", "m", [5.0, 10.0], leaves=[{"x": 5.0, "y": 2.5}, {"x2": 5.0, "y": 5.0}])
    by_name, _ = autoplan_trials([j])
    assert by_name[0].leaves == ["y"]
    by_position, _ = autoplan_trials([j], match="position")
    assert by_position[0].leaves == ["#1", "#2"]
    assert summarize(by_position).delta == pytest.approx(0.25)
    with pytest.raises(ValueError):
        autoplan_trials([j], match="meaning")


def test_sigma_is_the_sample_standard_deviation_over_trials() -> None:
    """Five trials per unit, as in the paper: σ is numpy's std with ddof=1, averaged over (unit, leaf)."""
    rng = np.random.default_rng(5)
    raw = rng.dirichlet([4.0, 3.0, 2.0], size=(6, 5))  # 6 instructions x 5 negotiations x 3 leaves
    samples = [WeightSample(item_id=f"u{u}", sample=t, weights={k: float(raw[u, t, n]) for n, k in enumerate("xyz")})
               for u in range(6) for t in range(5)]
    trials, _ = weight_trials(samples)
    expected_sigma = float(np.std(raw, axis=1, ddof=1).mean())
    expected_delta = float(np.abs(raw[:, 1:] - raw[:, :1]).sum(axis=1).mean())
    result = summarize(trials)
    assert result.sigma == pytest.approx(expected_sigma) and result.delta == pytest.approx(expected_delta)
    literal = float(np.sqrt(((raw - raw.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)).mean())
    assert summarize(trials, sigma="literal").sigma == pytest.approx(literal)


def test_empty_writings_are_left_out_and_counted(tmp_path: Path) -> None:
    """An empty writing's judgment is never a trial (the authors judge none): item C's weights exist only on an
    empty writing's judgment, so C is no unit; the CLI counts the empty judgments it left out."""
    import json

    from meta_helpers import judgment
    from typer.testing import CliRunner

    from howtobench.cli.main import app

    weights = [{"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.3}]
    js = [judgment("A", "x", 5.0, meta={"sample_weights": weights}),
          judgment("C", "x", 1.0, status="empty", meta={"sample_weights": [{"a": 0.1, "b": 0.9}, weights[0]]})]
    trials, _ = weight_trials(tow_weight_samples(js))
    assert [t.unit for t in trials] == ["A"]
    out = CliRunner().invoke(app, ["meta", "inconsistency", str(write_jsonl(tmp_path / "tow.jsonl", js)),
                                   "--format", "json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output)[0]
    assert summary["rows"][0]["δ (mean)"] == pytest.approx(0.2) and summary["rows"][0]["instructions"] == 1
    assert summary["rows"][0]["empty writings left out"] == 1
    assert any(n.startswith("1 judgments of empty writings left out") for n in summary["notes"])
    # auto-planning: an empty writing has no samples, so it never was a unit either; still counted
    plans = [sampled("w", "x", [4.0, 6.0], leaves=[{"p": 1.0, "q": 3.0}, {"p": 3.0, "q": 3.0}]),
             sampled("w", "y", [], method="autoplan").model_copy(update={"status": "empty", "score": 1.0})]
    out = CliRunner().invoke(app, ["meta", "inconsistency", str(write_jsonl(tmp_path / "ap.jsonl", plans)),
                                   "--kind", "autoplan", "--format", "json"])
    assert out.exit_code == 0, out.output
    row = json.loads(out.output)[0]["rows"][0]
    assert (row["writings"], row["empty writings left out"]) == (1, 1)
