"""The length model behind length-controlled scores: a two-way fixed-effects least-squares fit, bootstrapped.

For one task and one metric (the root, or a node), every scored writing w of model m for item i gives

    y_w = α_m + δ_i + β · x_w + ε_w,        x_w = ln(writing_chars / reference_chars)

with α_m a model effect (α of the reference model fixed at 0), δ_i an item effect (the item's difficulty, the
intercept folded in) and β the length coefficient shared by the task's models. The controlled score of model m
is its prediction at the reference's length (x = 0) averaged over the task's items:

    controlled_m = α_m + mean_i δ_i

so the models are compared on the same items, at the same length, and differ by α alone. This is the pointwise
analogue of AlpacaEval's length-controlled win rate (a GLM with a length term, predicted at zero length
difference): our scores are numbers, not preferences, so the link is the identity and the fit ordinary least
squares. The fit absorbs the item effects by demeaning within each item (Frisch–Waugh–Lovell), which is exact
with any pattern of missing writings and leaves a (models + 1)-column problem; its normal equations are sums of
per-item terms, so a bootstrap replicate (items resampled with replacement, every model's writing of a drawn
item coming along) is a weighted sum of precomputed arrays, not a refit (bench/length_control.py has the times).

docs/length-control.md states the model, what is predicted and how the intervals are formed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from howtobench.errors import DataError
from howtobench.stats.resampling import FloatArray, percentile_ci


@dataclass(frozen=True)
class Observations:
    """One row per scored writing with a length: model and item indices, length feature(s), score.

    `x` is the log length ratio (one column, one β), or an (n, q) matrix of length features (report.length_control
    passes the clipped ratio split at the reference: a slope below and one above); `beta` is then the first
    feature's coefficient and `betas` all of them."""

    model: np.ndarray
    item: np.ndarray
    x: FloatArray
    y: FloatArray
    n_models: int
    n_items: int


@dataclass(frozen=True)
class _ItemSums:
    """Per-item sufficient statistics of the within-item regression (design: model dummies but the reference's,
    then x). Any weighting of items gives the normal equations as weighted sums of these."""

    n: FloatArray  # (items,)
    sx: FloatArray  # (items, p)
    sy: FloatArray  # (items,)
    cxx: FloatArray  # (items, p, p) within-item cross products
    cxy: FloatArray  # (items, p)
    model_rows: FloatArray  # (items, models): writings of each model per item


@dataclass(frozen=True)
class FitQuality:
    """How well a fit explains the scores, and on how much data: R² of all variation, within-item R², length's
    partial R², RMSE, writings and items (the leaderboard prints and stores these as they are)."""

    r2: float
    r2_within: float
    partial_r2_length: float
    rmse: float
    n_obs: int
    n_items: int


@dataclass(frozen=True)
class FitResult:
    """The point fit: α per model (NaN when the data cannot say), β, each item's δ, and the fit's quality."""

    alpha: FloatArray
    beta: float
    delta: FloatArray
    controlled: FloatArray
    quality: FitQuality
    betas: tuple[float, ...] = ()
    item_adjusted: FloatArray | None = None
    """Each model's α + mean δ of the fit without length (β = 0): item effects only."""


def _design(obs: Observations, reference: int, with_length: bool = True) -> FloatArray:
    others = [m for m in range(obs.n_models) if m != reference]
    dummies = (obs.model[:, None] == np.array(others, dtype=int)[None, :]).astype(float)
    return np.column_stack([dummies, obs.x.reshape(obs.x.shape[0], -1)]) if with_length else dummies


def n_features(obs: Observations) -> int:
    """The number of length coefficients (columns of `x`)."""
    return 1 if obs.x.ndim == 1 else int(obs.x.shape[1])


def _per_item(item: np.ndarray, values: FloatArray, k: int) -> FloatArray:
    """Sums of `values` rows (any trailing shape) per item, as a (k, ...) array: rows sorted by item, then summed
    in one `np.add.reduceat` (`np.add.at` over writings × p × p is an unbuffered loop, many times slower)."""
    out = np.zeros((k, *values.shape[1:]))
    if item.size == 0:
        return out
    order = np.argsort(item, kind="stable")
    sorted_items = item[order]
    starts = np.flatnonzero(np.r_[True, sorted_items[1:] != sorted_items[:-1]])
    out[sorted_items[starts]] = np.add.reduceat(values[order], starts, axis=0)
    return out


def _item_sums(obs: Observations, design: FloatArray) -> _ItemSums:
    k = obs.n_items
    n = np.bincount(obs.item, minlength=k).astype(float)
    sx = _per_item(obs.item, design, k)
    sy = np.bincount(obs.item, weights=obs.y, minlength=k).astype(float)
    xx = _per_item(obs.item, design[:, :, None] * design[:, None, :], k)
    xy = _per_item(obs.item, design * obs.y[:, None], k)
    safe = np.where(n > 0, n, 1.0)
    cxx = xx - sx[:, :, None] * sx[:, None, :] / safe[:, None, None]
    cxy = xy - sx * (sy / safe)[:, None]
    rows = _per_item(obs.item, (obs.model[:, None] == np.arange(obs.n_models)[None, :]).astype(float), k)
    return _ItemSums(n, sx, sy, cxx, cxy, rows)


def _solve(sums: _ItemSums, weights: FloatArray) -> FloatArray:
    """θ for each weighting of the items (weights: replicates × items) by the pseudo-inverse: a direction the data
    leave free (a model absent from a replicate) gets no weight, and that model's α is masked by the caller."""
    a = np.einsum("bi,ipq->bpq", weights, sums.cxx)
    b = np.einsum("bi,ip->bp", weights, sums.cxy)
    theta: FloatArray = np.einsum("bpq,bq->bp", np.linalg.pinv(a, rcond=1e-10, hermitian=True), b)
    return theta


def _controlled(sums: _ItemSums, theta: FloatArray, weights: FloatArray, reference: int,
                n_models: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """α (replicates × models), δ (replicates × items) and the controlled scores (replicates × models)."""
    reps = theta.shape[0]
    alpha = np.zeros((reps, n_models))
    others = [m for m in range(n_models) if m != reference]
    alpha[:, others] = theta[:, : len(others)]
    seen = sums.n > 0
    safe = np.where(seen, sums.n, 1.0)
    delta = (sums.sy[None, :] - np.einsum("ip,bp->bi", sums.sx, theta)) / safe[None, :]
    w = weights * seen[None, :]
    mean_delta = (w * delta).sum(axis=1) / w.sum(axis=1)
    # a model without a within-item contrast in this weighting (no writing, or alone on each of its items) has no α
    contrast = np.einsum("bi,im->bm", w, (sums.model_rows > 0) & (sums.n[:, None] > 1))
    alpha = np.where(contrast > 0, alpha, np.nan)
    return alpha, delta, alpha + mean_delta[:, None]


def _quality(obs: Observations, design: FloatArray, theta: FloatArray, delta: FloatArray,
             rss_no_length: float) -> tuple[float, float, float, float]:
    resid = obs.y - design @ theta - delta[obs.item]
    rss = float(resid @ resid)
    tss = float(((obs.y - obs.y.mean()) ** 2).sum())
    item_mean = np.bincount(obs.item, weights=obs.y, minlength=obs.n_items) / np.maximum(
        np.bincount(obs.item, minlength=obs.n_items), 1)
    within = float(((obs.y - item_mean[obs.item]) ** 2).sum())
    r2 = 1 - rss / tss if tss > 0 else float("nan")
    r2_within = 1 - rss / within if within > 0 else float("nan")
    partial = 1 - rss / rss_no_length if rss_no_length > 0 else float("nan")
    return r2, r2_within, partial, float(np.sqrt(rss / len(obs.y)))


def identified(obs: Observations) -> bool:
    """Whether the lengths vary within items once the model effects are taken out (else β has no estimate)."""
    sums = _item_sums(obs, _design(obs, reference_model(obs)))
    a = sums.cxx.sum(axis=0)
    return bool(np.linalg.matrix_rank(a, tol=1e-9 * max(1.0, float(np.abs(a).max()))) == a.shape[0]
                - _free_models(obs, sums))


def _free_models(obs: Observations, sums: _ItemSums) -> int:
    """Model columns with no within-item contrast (a model alone on each of its items): rank the data cannot give."""
    ref = reference_model(obs)
    contrast = np.asarray(((sums.model_rows > 0) & (sums.n[:, None] > 1)).any(axis=0), dtype=bool)
    return len([m for m in range(obs.n_models) if m != ref and not bool(contrast[m])])


def reference_model(obs: Observations) -> int:
    """The model with the most writings: its α is fixed at 0 (any choice gives the same controlled scores)."""
    return int(np.argmax(np.bincount(obs.model, minlength=obs.n_models)))


def fit(obs: Observations) -> FitResult:
    """The point estimate on all the items, with R² (all variation), within-item R² and length's partial R²."""
    ref = reference_model(obs)
    design = _design(obs, ref)
    ones = np.ones((1, obs.n_items))
    if not identified(obs):
        raise DataError("the length coefficient is not identified: on every item all models wrote the same length "
                        "ratio, or the ratios move with the models exactly")
    theta = _solve(_item_sums(obs, design), ones)
    alpha, delta, controlled = _controlled(_item_sums(obs, design), theta, ones, ref, obs.n_models)
    short = _design(obs, ref, with_length=False)
    theta0 = _solve(_item_sums(obs, short), ones)
    _, delta0, item0 = _controlled(_item_sums(obs, short), theta0, ones, ref, obs.n_models)
    resid0 = obs.y - short @ theta0[0] - delta0[0][obs.item]
    r2, r2w, partial, rmse = _quality(obs, design, theta[0], delta[0], float(resid0 @ resid0))
    quality = FitQuality(r2=r2, r2_within=r2w, partial_r2_length=partial, rmse=rmse, n_obs=int(obs.y.size),
                         n_items=int((np.bincount(obs.item, minlength=obs.n_items) > 0).sum()))
    q = n_features(obs)
    return FitResult(alpha=alpha[0], beta=float(theta[0, -q]), delta=delta[0], controlled=controlled[0],
                     quality=quality, betas=tuple(float(b) for b in theta[0, -q:]), item_adjusted=item0[0])


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates of the controlled scores (replicates × models, NaN where a model had no contrast),
    of β, and the number of items each replicate averaged over."""

    controlled: FloatArray
    beta: FloatArray
    items: FloatArray
    betas: FloatArray | None = None
    """Replicates × length coefficients (the first is `beta`)."""
    item_adjusted: FloatArray | None = None
    """Replicates × models of the fit without length, on the same resampled items."""


def bootstrap(obs: Observations, n_boot: int, rng: np.random.Generator) -> Replicates:
    """Items resampled with replacement (a drawn item brings every model's writing of it), the model refitted."""
    ref = reference_model(obs)
    sums = _item_sums(obs, _design(obs, ref))
    present = np.flatnonzero(sums.n > 0)
    draws = present[rng.integers(0, present.size, size=(n_boot, present.size))]
    weights = np.zeros((n_boot, obs.n_items))
    np.add.at(weights, (np.repeat(np.arange(n_boot), present.size), draws.ravel()), 1.0)
    theta = _solve(sums, weights)
    _, _, controlled = _controlled(sums, theta, weights, ref, obs.n_models)
    short = _item_sums(obs, _design(obs, ref, with_length=False))
    _, _, item_adjusted = _controlled(short, _solve(short, weights), weights, ref, obs.n_models)
    q = n_features(obs)
    return Replicates(controlled=controlled, beta=theta[:, -q], items=np.full(n_boot, float(present.size)),
                      betas=theta[:, -q:], item_adjusted=item_adjusted)


def interval(values: FloatArray) -> tuple[float, float] | None:
    """The 95% percentile interval of the finite replicates (howtobench.stats); None without any."""
    low, high = percentile_ci(values)
    return None if math.isnan(low) else (low, high)
