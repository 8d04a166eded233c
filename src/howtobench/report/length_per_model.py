"""Per-model length slopes in the length-controlled tables (`--length-slopes per-model`; pooled is the default).

One pooled slope per task leaves a length reward the judge gives one model only in place (the issue measured 0.48
points off). With this option the root score of one task is modelled as

    y_w = α_m + δ_i + b_m · x_w + κ · max(x_w, 0) + ε_w,        x_w = ln(writing chars / reference chars)

b_m is model m's slope below the reference, b_m + κ its slope above: the bend κ at the reference is shared (above
the reference only a fifth of the release's writings lie, too few per model for a slope of their own), so one
per-model number moves both sides. Each model's own b_m and its variance s_m² come from one least-squares fit
(item effects absorbed by demeaning within items), and are shrunk toward the pooled fit's slope below the
reference by empirical Bayes (stats.length_slopes: τ² by the method of moments, w_m = τ² / (τ² + s_m²)):

    d_m = w_m · (b_m − β_below)                    (the model's shrunk deviation from the pool)
    slope below = β_below + d_m,   slope above = β_above + d_m

With --length-anchor the pooled slopes are the anchor's (the pairs measure the judge, pooled across models) and
d_m the observational deviation from the observational pool, added to them. The correction is bounded exactly as
the pooled one (report.length_control): each writing is charged max(line(x), line(x clipped to its model's
support)) with its model's slopes, the model + item fit is made on what is left, and every value and interval
bound is clipped to the observed scores; the support and the † flags do not depend on the slopes.

Intervals: the pooled fit's item draws (`rng_for(seed, "length|score|<task>")`); in each replicate the own slopes,
τ², the weights and the pooled slopes are all refitted on the drawn items, then the charges and the model + item
fit, so a controlled cell's interval carries the slopes' uncertainty. The fits are exact sums over items
(`stats.length_fit`; the numerics in `stats.length_slopes`), so a replicate is a weighted sum, not a refit of the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.report.length_anchor import PairSlope, pair_features
from howtobench.stats import FloatArray, percentile_ci
from howtobench.stats.length_fit import Observations
from howtobench.stats.length_slopes import item_fit, own_slopes, shrink

MODES = ("pooled", "per-model")
"""`--length-slopes`: one slope pair per task shared by its models (default), or one per model, shrunk."""


@dataclass(frozen=True)
class ModelSlopes:
    """A task's per-model slopes (index: the fit's models): the own slope below the reference and its standard
    error, the shrinkage weight, the slopes used below and above the reference, the interval of the one below,
    the between-model variance τ² and the pooled slope they shrink toward."""

    own: FloatArray
    own_se: FloatArray
    weight: FloatArray
    below: FloatArray
    above: FloatArray | None
    below_ci: tuple[tuple[float, float] | None, ...]
    tau2: float
    pooled: float


def _charges(obs: Observations, line: FloatArray, bounded: FloatArray, deviation: FloatArray,
             own_x: FloatArray) -> FloatArray:
    """(replicates × writings) what each score pays for its length: the pooled line plus the model's deviation
    times x, the larger of the unclipped and the support-clipped charge (report.length_control.bounded_credit)."""
    d = deviation[:, obs.model]
    return np.maximum(line + d * obs.x[None, :], bounded + d * own_x[None, :])


@dataclass(frozen=True)
class PooledLine:
    """The pooled length term the deviations are added to: per replicate (rows) the line and its support-clipped
    value for each writing, and the pooled slopes below / above (for the table)."""

    line: FloatArray
    bounded: FloatArray
    below: FloatArray
    above: FloatArray | None


def observational_line(fitted: FloatArray, corrected: FloatArray, betas: FloatArray, bent: bool) -> PooledLine:
    """The pooled fit's own slopes (`betas`: replicates × features) on its features (`fitted`: writings ×
    features, as the fit saw them; `corrected`: clipped to each model's support)."""
    n = fitted.shape[0]
    line = (fitted.reshape(n, -1) @ betas.T).T
    bounded = (corrected.reshape(n, -1) @ betas.T).T
    return PooledLine(line, bounded, betas[:, 0], betas[:, 1] if bent else None)


def anchored_line(x: FloatArray, own_x: FloatArray, anchor: PairSlope, replicates: int) -> PooledLine:
    """The anchor's measured slopes (fixed: the pairs are resampled on their own, report.length_anchor)."""
    bent = anchor.beta_above is not None
    line = pair_features(x, bent) @ anchor.betas
    bounded = pair_features(own_x, bent) @ anchor.betas
    above = None if anchor.beta_above is None else np.full(replicates, anchor.beta_above)
    return PooledLine(np.tile(line, (replicates, 1)), np.tile(bounded, (replicates, 1)),
                      np.full(replicates, anchor.beta), above)


_Five = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]


def per_model_controlled(obs: Observations, own_x: FloatArray, bent: bool, weights: FloatArray,
                         observational_below: FloatArray, pooled: PooledLine) -> _Five:
    """Per replicate (rows of `weights`): controlled values (replicates × models), own slopes, their variances, the
    weights and the per-model slopes below the reference. `obs.x` is the unclipped log ratio, `own_x` each
    writing's ratio clipped to its model's support; the own slopes shrink toward `observational_below` (the pooled
    fit's slope below the reference, per replicate) and the deviation is added to `pooled`."""
    own, var = own_slopes(obs, bent, weights)
    weight, shrunk, _ = shrink(own, var, observational_below)
    deviation = shrunk - observational_below[:, None]
    charges = _charges(obs, pooled.line, pooled.bounded, deviation, own_x)
    controlled = item_fit(obs, obs.y[None, :] - charges, weights)
    return controlled, own, var, weight, pooled.below[:, None] + deviation


def model_slopes(obs: Observations, own_x: FloatArray, bent: bool, point: tuple[FloatArray, PooledLine],
                 reps: tuple[FloatArray, FloatArray, PooledLine] | None) -> tuple[FloatArray, FloatArray,
                                                                                  ModelSlopes]:
    """The point controlled values (models), their replicates (replicates × models; empty without a bootstrap)
    and the slopes' summary. `point` is (observational slope below, pooled line) on all items; `reps` the item
    weights, observational slopes below and pooled lines of the replicates."""
    ones = np.ones((1, obs.n_items))
    below_obs, line = point
    controlled, own, var, weight, below = per_model_controlled(obs, own_x, bent, ones, below_obs, line)
    _, _, tau2 = shrink(own, var, below_obs)
    replicates = np.empty((0, obs.n_models))
    cis: tuple[tuple[float, float] | None, ...] = (None,) * obs.n_models
    if reps is not None:
        weights, reps_below, reps_line = reps
        replicates, _, _, _, reps_slopes = per_model_controlled(obs, own_x, bent, weights, reps_below, reps_line)
        cis = tuple(_ci(reps_slopes[:, m]) for m in range(obs.n_models))
    above = None if line.above is None else line.above[0] + (below[0] - line.below[0])
    summary = ModelSlopes(own=own[0], own_se=np.sqrt(var[0]), weight=weight[0], below=below[0], above=above,
                          below_ci=cis, tau2=float(tau2[0]), pooled=float(below_obs[0]))
    return controlled[0], replicates, summary


@dataclass(frozen=True)
class ModelSlope:
    """One model's row of the per-model slopes table: own slope below the reference (NaN: none) and its standard
    error, shrinkage weight, the slopes used below and above (None: one slope) and the interval of the one below."""

    own: float
    own_se: float
    weight: float
    below: float
    below_ci: tuple[float, float] | None
    above: float | None


def by_column(slopes: ModelSlopes, names: Sequence[str]) -> dict[str, ModelSlope]:
    """The summary's rows keyed by the fit's column names (`names[m]` is the fit's model m)."""
    return {name: ModelSlope(float(slopes.own[m]), float(slopes.own_se[m]), float(slopes.weight[m]),
                             float(slopes.below[m]), slopes.below_ci[m],
                             None if slopes.above is None else float(slopes.above[m]))
            for m, name in enumerate(names)}


def _ci(values: FloatArray) -> tuple[float, float] | None:
    low, high = percentile_ci(values)
    return None if np.isnan(low) else (low, high)
