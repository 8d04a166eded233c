"""The judge's slope measured on pairs (report.length_anchor): against statsmodels' OLS without a constant, a
bent judge recovered, one slope when a side has too few pairs, and the bootstrap interval covering the truth."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from howtobench.report.length_anchor import Pair, length_change, pair_slope


def _pairs(n: int, below: float, above: float, seed: int = 0) -> list[Pair]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x0 = float(rng.normal(-0.4, 0.6))
        x1 = x0 + float(rng.choice([np.log(2.0), np.log(0.5)]))  # padded or trimmed
        quality = float(rng.normal(5, 1))

        def judge(x: float, q: float = quality) -> float:
            return q + below * min(x, 0.0) + above * max(x, 0.0) + float(rng.normal(0, 0.2))

        out.append(Pair(x0, x1, judge(x0), judge(x1)))
    return out


def test_equals_statsmodels_ols_without_a_constant() -> None:
    pairs = _pairs(200, 0.4, 2.0)
    slope = pair_slope(pairs, n_boot=0)
    assert slope is not None and slope.beta_above is not None
    d = length_change(pairs, True)
    dy = np.array([p.y_after - p.y_before for p in pairs])
    reference = sm.OLS(dy, d).fit()
    np.testing.assert_allclose([slope.beta, slope.beta_above], reference.params, atol=1e-12)


def test_a_judge_rewarding_length_above_the_reference_only_is_recovered_with_intervals() -> None:
    slope = pair_slope(_pairs(400, 0.0, 2.0, seed=3), n_boot=500, seed=1)
    assert slope is not None and slope.beta_ci is not None and slope.beta_above_ci is not None
    assert slope.beta_ci[0] < 0.0 < slope.beta_ci[1]
    assert slope.beta_above_ci[0] < 2.0 < slope.beta_above_ci[1]


def test_one_slope_when_a_side_has_too_few_pairs() -> None:
    pairs = [Pair(-1.0 - 0.01 * k, -0.5 - 0.01 * k, 5.0, 5.0 + 0.5 * 1.5) for k in range(30)]
    slope = pair_slope(pairs, n_boot=0)
    assert slope is not None and slope.beta_above is None and slope.beta == pytest.approx(1.5)
    assert pair_slope([], n_boot=0) is None
    assert pair_slope([Pair(0.1, 0.1, 5.0, 6.0)], n_boot=0) is None  # no length change: nothing to measure
