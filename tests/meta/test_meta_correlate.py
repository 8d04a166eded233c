"""Correlations with humans on constructed data whose values are known exactly."""

from __future__ import annotations

import numpy as np
import pytest
from meta_helpers import judgment, sampled
from scipy import stats

from howtobench.meta.correlate import (
    BootstrapSettings,
    correlate_method,
    correlate_scores,
    correlation_table,
)
from howtobench.meta.stats import kendall_rows, pearson_rows, spearman_rows

MODELS = ["a", "b", "c", "d"]
FAST = BootstrapSettings(n_boot=200, seed=7)


def test_row_functions_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(1, 5, size=(20, 9)).astype(float)
    y = x + rng.integers(-2, 3, size=(20, 9))
    for r in range(20):
        assert pearson_rows(x, y)[r] == pytest.approx(stats.pearsonr(x[r], y[r])[0])
        assert spearman_rows(x, y)[r] == pytest.approx(stats.spearmanr(x[r], y[r])[0])
        assert kendall_rows(x, y)[r] == pytest.approx(stats.kendalltau(x[r], y[r])[0])
    assert np.isnan(pearson_rows(np.ones((1, 3)), np.arange(3.0)[None, :]))[0]


def _human() -> dict[tuple[str, str], float]:
    # item i1: a<b<c<d ; item i2: a<b<d<c (one swap) ; item i3 is completion: identical order to i1
    return {
        **{("i1", m): float(k + 1) for k, m in enumerate(MODELS)},
        **{("i2", m): v for m, v in zip(MODELS, [1.0, 2.0, 4.0, 3.0], strict=True)},
        **{("i3", m): float(k + 1) for k, m in enumerate(MODELS)},
    }


def test_known_values_system_and_sample_level() -> None:
    human = _human()
    judge = {key: 2 * v + 1 for key, v in human.items()}  # affine in every item -> perfect everywhere
    judge[("i2", "c")], judge[("i2", "d")] = 7.0, 9.0  # i2 judged a<b<c<d: one discordant pair of 6
    tasks = {"i1": "guide", "i2": "guide", "i3": "completion"}
    cells, n_items, n_models = correlate_scores(judge, human, tasks, FAST)
    assert n_items == {"completion": 1, "guide": 2, "open": 0, "all": 3} and n_models["guide"] == 4
    # sample level, guide: mean of i1 (perfect) and i2 (tau = (5-1)/6, rho = 0.8, r = 0.8)
    assert cells[("sample", "guide", "kendall")].value == pytest.approx((1 + 4 / 6) / 2)
    assert cells[("sample", "guide", "spearman")].value == pytest.approx((1 + 0.8) / 2)
    assert cells[("sample", "guide", "pearson")].value == pytest.approx((1 + 0.8) / 2)
    # system level, guide: human means (1,2,3.5,3.5), judge means (3,5,7,9)
    hm, jm = [1, 2, 3.5, 3.5], [3, 5, 7, 9]
    assert cells[("system", "guide", "pearson")].value == pytest.approx(stats.pearsonr(jm, hm)[0])
    assert cells[("system", "guide", "kendall")].value == pytest.approx(stats.kendalltau(jm, hm)[0])
    assert cells[("system", "completion", "spearman")].value == pytest.approx(1.0)
    assert ("system", "open", "pearson") not in cells


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(3)
    human = {(f"i{i}", m): float(rng.integers(1, 6)) for i in range(30) for m in MODELS}
    judge = {k: v + rng.normal(0, 1) for k, v in human.items()}
    tasks = {f"i{i}": "open" for i in range(30)}
    first, _, _ = correlate_scores(judge, human, tasks, FAST)
    again, _, _ = correlate_scores(judge, human, tasks, FAST)
    assert first == again
    for est in first.values():
        assert est.low <= est.value <= est.high or np.isnan(est.value)
    other, _, _ = correlate_scores(judge, human, tasks, BootstrapSettings(n_boot=200, seed=8))
    assert other[("sample", "all", "pearson")].low != first[("sample", "all", "pearson")].low


def test_self_consistency_worst_best_mean_and_cost() -> None:
    human = {(f"i{i}", m): float(k + 1) for i in range(3) for k, m in enumerate(MODELS)}
    js = [
        # sample 0 agrees with humans, sample 1 reverses them; their mean (2.5 everywhere) is constant
        sampled(i, m, [float(k + 1), float(4 - k)], cost=0.5)
        for i in ("i0", "i1", "i2")
        for k, m in enumerate(MODELS)
    ]
    worst, best, mean = correlate_method("Auto-Plan", js, human, FAST)
    assert worst.method == "Auto-Plan - worst" and best.method == "Auto-Plan - best"
    assert mean.method == "Auto-Plan + SC (n=2)"
    assert worst.cells[("system", "all", "kendall")].value == pytest.approx(-1.0)
    assert best.cells[("sample", "guide", "spearman")].value == pytest.approx(1.0)
    assert np.isnan(mean.cells[("system", "all", "pearson")].value)
    assert mean.cost_usd == pytest.approx(6.0) and worst.cost_usd == pytest.approx(3.0)


def test_failed_scores_are_left_out_and_table_shape() -> None:
    human = _human()
    js = [judgment(i, m, None if (i, m) == ("i1", "a") else v, task="guide") for (i, m), v in human.items()]
    (row,) = correlate_method("ToW", js, human, FAST)
    assert row.cost_usd is None
    assert row.n_models["all"] == 4
    table = correlation_table([row], "system")
    assert table.columns[:5] == ["Method", "Cost ($)", "Comp ρ", "Comp τ", "Comp σ"]
    assert len(table.columns) == 14
    assert table.rows[0][-1].startswith("1.00 [")
    cols = correlation_table([row], "sample", ci="columns")
    assert cols.columns[2:5] == ["Comp ρ", "Comp ρ low", "Comp ρ high"]
