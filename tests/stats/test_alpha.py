"""Closed-form Krippendorff's α (stats.alpha) against the `krippendorff` package, the reference implementation, on
small data where the package's (units × V × V) arrays fit: every level, gaps, ties, unpairable units."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("krippendorff", reason="the [dev] extra installs krippendorff (the reference alpha)")

import krippendorff

from howtobench.stats import alpha as alpha_module
from howtobench.stats.alpha import LEVELS, alpha


def _reference(matrix: np.ndarray, level: str) -> float:
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def _random(rng: np.random.Generator, judges: int, units: int, *, continuous: bool, gaps: float) -> np.ndarray:
    truth = rng.normal(5, 2, size=units)
    m = truth[None, :] + rng.normal(0, 1, size=(judges, units))
    m = np.clip(m, 1, 10) if continuous else np.clip(np.round(m), 1, 10)
    m[rng.random(m.shape) < gaps] = np.nan
    return m


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(6))
def test_equals_the_package_to_1e9(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    judges, units = int(rng.integers(2, 6)), int(rng.integers(5, 60))
    m = _random(rng, judges, units, continuous=seed % 2 == 0, gaps=0.25)
    assert alpha(m, level) == pytest.approx(_reference(m, level), abs=1e-9)  # type: ignore[arg-type]


def test_the_package_docstring_example() -> None:
    nan = np.nan
    data = np.array([[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
                     [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
                     [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]])
    assert round(alpha(data, "nominal"), 6) == 0.691358
    assert round(alpha(data, "interval"), 6) == 0.810845
    assert alpha(data, "ordinal") == pytest.approx(_reference(data, "ordinal"), abs=1e-12)


def test_undefined_cases_are_nan_not_a_number() -> None:
    assert np.isnan(alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))  # no unit with two values
    assert np.isnan(alpha(np.full((3, 4), 5.0)))  # one value throughout: nothing to expect


def test_perfect_agreement_is_one_and_independent_noise_is_near_zero() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=500)
    assert alpha(np.vstack([v, v, v])) == pytest.approx(1.0)
    assert abs(alpha(rng.normal(size=(3, 5000)))) < 0.03


def test_ratio_refuses_in_one_line_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alpha_module, "RATIO_MAX_VALUES", 10)
    with pytest.raises(ValueError, match=r"^ratio α over 40 distinct values needs 40² distances"):
        alpha(np.random.default_rng(0).uniform(1, 10, size=(2, 20)), "ratio")


def test_unknown_level_is_named() -> None:
    with pytest.raises(ValueError, match="must be one of interval, ordinal, nominal, ratio, not 'ordinl'"):
        alpha(np.ones((2, 2)), "ordinl")  # type: ignore[arg-type]
