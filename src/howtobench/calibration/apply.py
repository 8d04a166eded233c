"""New-judge scores in the reference judge's units, with the calibration's uncertainty carried into intervals.

Each writing's score goes through its task's map (or the pooled one, `fit.scope_for`). A mean's 95% interval
resamples both sources of doubt at once: replicate b maps the scores with bootstrap map b (anchors resampled) and
averages them over items resampled with replacement; the percentile interval of those replicates is wider than
either alone. Scores outside the anchors' range take the map's end value and are counted (`n_outside`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from howtobench.calibration.fit import map_replicates, scope_for
from howtobench.calibration.isotonic import MonotoneMap
from howtobench.calibration.record import Calibration
from howtobench.stats import FloatArray, percentile_ci


@dataclass(frozen=True)
class Mapped:
    """Scores of one node through the calibration: point values, bootstrap replicates (B × n), outside-range flags.
    NaN where a writing has no score (or no map covers its task)."""

    point: FloatArray
    reps: FloatArray
    outside: np.ndarray


@dataclass(frozen=True)
class MeanEstimate:
    mean: float
    ci_low: float | None
    ci_high: float | None
    n: int
    n_outside: int


@dataclass
class Mapper:
    """Maps scores with one calibration, fitting each (node, scope)'s point and bootstrap maps once."""

    cal: Calibration
    n_boot: int
    _boot: dict[tuple[str, str], list[MonotoneMap]] = field(default_factory=dict)

    def _maps(self, node: str, scope: str) -> tuple[MonotoneMap, list[MonotoneMap]]:
        fit = self.cal.map_for(node, scope)
        assert fit is not None
        if (node, scope) not in self._boot:
            self._boot[(node, scope)] = map_replicates(self.cal.anchors, node, scope, self.n_boot, self.cal.seed)
        return MonotoneMap(np.array(fit.knots_x), np.array(fit.knots_y)), self._boot[(node, scope)]

    def has(self, node: str) -> bool:
        return any(m.node == node for m in self.cal.maps)

    def map(self, node: str, tasks: np.ndarray, scores: np.ndarray) -> Mapped:
        """`scores` (NaN = none) of writings of `tasks` through the maps of `node`."""
        scores = np.asarray(scores, dtype=float)
        point = np.full(scores.shape, np.nan)
        reps = np.full((self.n_boot, scores.size), np.nan)
        outside = np.zeros(scores.shape, dtype=bool)
        for task in sorted(set(np.asarray(tasks).tolist())):
            scope = scope_for(self.cal, node, task)
            if scope is None:
                continue
            sel = (np.asarray(tasks) == task) & ~np.isnan(scores)
            fitted, boot = self._maps(node, scope)
            point[sel] = fitted(scores[sel])
            outside[sel] = fitted.outside(scores[sel])
            for b, m in enumerate(boot):
                reps[b, sel] = m(scores[sel])
        return Mapped(point, reps, outside)


def mean_estimate(mapped: Mapped, mask: np.ndarray, rng: np.random.Generator) -> MeanEstimate | None:
    """The calibrated mean over the writings of `mask` that have a mapped score, with its joint interval."""
    sel = np.asarray(mask, dtype=bool) & ~np.isnan(mapped.point)
    n = int(sel.sum())
    if n == 0:
        return None
    point = float(mapped.point[sel].mean())
    n_outside = int(mapped.outside[sel].sum())
    if n < 2 or mapped.reps.shape[0] == 0:
        return MeanEstimate(point, None, None, n, n_outside)
    reps = mapped.reps[:, sel]
    draws = rng.integers(0, n, size=reps.shape)
    low, high = percentile_ci(np.take_along_axis(reps, draws, axis=1).mean(axis=1))
    return MeanEstimate(point, low, high, n, n_outside)
