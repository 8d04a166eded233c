"""The monotone map from the new judge's scores to the reference judge's, and its bootstrap over anchors.

The fit is `scipy.optimize.isotonic_regression` (pool-adjacent-violators, scipy >= 1.12) on the anchors' reference
scores ordered by their new-judge scores, tied new scores pooled first (their mean, weighted by their count), as
scikit-learn's `IsotonicRegression` does; a score is mapped by linear interpolation between the fitted knots. So the
map equals `IsotonicRegression(out_of_bounds="clip").fit(x, y).predict` (tests/calibration/test_isotonic.py), without
making scikit-learn a dependency for one function. Why isotonic: the only assumption is that the two judges order
scores the same way (a higher new score never means a lower reference score); a line would also assume the shift is
the same at 3 and at 9, which a judge that clips at 10 breaks.

A score outside the anchors' range cannot be mapped by anything the anchors saw: it takes the nearest end's value
(clipped) and is counted as extrapolated wherever a calibrated number is printed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from howtobench.stats import FloatArray


@dataclass(frozen=True)
class MonotoneMap:
    """Knots of a fitted non-decreasing map: `x` strictly increasing new-judge scores, `y` the reference's."""

    x: FloatArray
    y: FloatArray

    def __call__(self, scores: np.ndarray) -> FloatArray:
        """The mapped scores (clipped to the ends outside the knots)."""
        out: FloatArray = np.interp(np.asarray(scores, dtype=float), self.x, self.y)
        return out

    def outside(self, scores: np.ndarray) -> np.ndarray:
        """True where a score lies outside the anchors' range (its mapped value is an end value)."""
        s = np.asarray(scores, dtype=float)
        return np.asarray((s < self.x[0]) | (s > self.x[-1]))


def pooled(x: np.ndarray, y: np.ndarray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Unique x (sorted), the mean y at each, and how many anchors each stands for."""
    ux, inverse, counts = np.unique(np.asarray(x, dtype=float), return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=np.asarray(y, dtype=float), minlength=ux.size)
    return ux, sums / counts, counts.astype(float)


def fit_monotone(x: np.ndarray, y: np.ndarray) -> MonotoneMap:
    """Isotonic (non-decreasing) least-squares map x -> y; needs at least one anchor."""
    from scipy.optimize import isotonic_regression

    if len(x) == 0 or len(x) != len(y):
        raise ValueError(f"a map needs paired anchors (got {len(x)} new and {len(y)} reference scores)")
    ux, my, w = pooled(x, y)
    fitted = isotonic_regression(my, weights=w, increasing=True).x
    return MonotoneMap(ux, np.asarray(fitted, dtype=float))


def bootstrap_maps(x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator) -> list[MonotoneMap]:
    """`n_boot` maps, each fitted on the anchors resampled with replacement: the map's uncertainty over anchors."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    draws = rng.integers(0, len(x), size=(n_boot, len(x)))
    return [fit_monotone(x[ix], y[ix]) for ix in draws]


def mapped_replicates(maps: list[MonotoneMap], scores: np.ndarray) -> FloatArray:
    """(len(maps), len(scores)): every score through every bootstrap map."""
    s = np.asarray(scores, dtype=float)
    return np.stack([m(s) for m in maps]) if maps else np.empty((0, s.size))
