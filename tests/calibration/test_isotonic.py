"""The monotone map against scikit-learn's IsotonicRegression and scipy's isotonic_regression."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the [dev] extra installs scikit-learn (the reference isotonic regression)")

from scipy.optimize import isotonic_regression
from sklearn.isotonic import IsotonicRegression

from howtobench.calibration.isotonic import bootstrap_maps, fit_monotone, mapped_replicates


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_map_equals_sklearn_with_ties_and_clipping(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 11, size=200).astype(float) + rng.choice([0.0, 0.25, 0.5], size=200)  # many ties
    y = np.clip(0.6 * x + rng.normal(0, 1.5, size=200), 1, 10)
    ours = fit_monotone(x, y)
    ref = IsotonicRegression(out_of_bounds="clip").fit(x, y)
    grid = np.linspace(-2, 14, 301)  # inside, between and outside the knots
    np.testing.assert_allclose(ours(grid), ref.predict(grid), atol=1e-10)
    np.testing.assert_allclose(ours(x), ref.predict(x), atol=1e-10)


def test_untied_fit_is_scipys_pava() -> None:
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(0, 10, 50))
    y = x + rng.normal(0, 2, 50)
    ours = fit_monotone(x[::-1], y[::-1])  # order of the anchors does not matter
    np.testing.assert_allclose(ours.y, isotonic_regression(y).x)
    assert np.all(np.diff(ours.y) >= 0)


def test_outside_and_single_value() -> None:
    m = fit_monotone(np.array([3.0, 3.0, 5.0]), np.array([4.0, 6.0, 7.0]))
    assert m(np.array([1.0, 3.0, 4.0, 9.0])).tolist() == [5.0, 5.0, 6.0, 7.0]
    assert m.outside(np.array([2.9, 3.0, 5.0, 5.1])).tolist() == [True, False, False, True]
    with pytest.raises(ValueError, match="paired anchors"):
        fit_monotone(np.array([]), np.array([]))


def test_bootstrap_is_seeded_and_spreads() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 10, 80)
    y = x + rng.normal(0, 1, 80)
    a = mapped_replicates(bootstrap_maps(x, y, 50, np.random.default_rng(3)), np.array([2.0, 5.0, 8.0]))
    b = mapped_replicates(bootstrap_maps(x, y, 50, np.random.default_rng(3)), np.array([2.0, 5.0, 8.0]))
    assert a.shape == (50, 3)
    np.testing.assert_array_equal(a, b)
    assert (a.std(axis=0) > 0.05).all()
