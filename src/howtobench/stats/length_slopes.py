"""Per-model length slopes shrunk toward the pooled slope (an option beyond the paper; pooled is the default).

The pooled fit (stats.length_fit) gives every model of a task one β. A model whose score moves with length
differently would want its own β_m, but a model's own slope rests on its own writings alone and is noisy, so each
is shrunk toward the pooled β by empirical Bayes (the random-slope model β_m ~ N(β, τ²)):

    b_m, s_m²  = model m's own slope and its variance from one OLS of y on item effects, model effects and a
                 slope per model (x · 1[model = m]), the item effects absorbed by demeaning within items
    τ²         = max(0, var_m(b_m) − mean_m(s_m²))                      (method of moments, between-model variance)
    w_m        = τ² / (τ² + s_m²)                                        (the precision of b_m against τ²)
    β̃_m        = w_m · b_m + (1 − w_m) · β

so β̃_m lies between b_m and β: a model with few or scattered writings keeps nearly the pooled slope, and with
τ² = 0 (the models agree within their noise) every β̃_m is β. Pooled stays the default because with the few
models and items of a typical run τ² is poorly estimated and per-model slopes add variance to the controlled
scores without a clear gain in bias (docs/length-control.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from howtobench.stats.length_fit import Observations, _item_sums, _per_item, fit, reference_model
from howtobench.stats.resampling import FloatArray


@dataclass(frozen=True)
class ShrunkSlopes:
    """Each model's own slope and its variance (NaN with fewer than three writings or no spread of x), the pooled
    slope, the between-model variance τ², the weights w_m and the shrunk slopes β̃_m."""

    own: FloatArray
    own_var: FloatArray
    pooled: float
    tau2: float
    weight: FloatArray
    shrunk: FloatArray


def shrunk_slopes(obs: Observations) -> ShrunkSlopes:
    """The formula of the module docstring on one-feature observations, all items weighted once (`own_slopes` and
    `shrink` with one replicate and no bend); a model without its own slope keeps β."""
    if obs.x.ndim != 1:
        raise ValueError("per-model slopes take one length feature")
    pooled = fit(obs)
    own, var = own_slopes(obs, False, np.ones((1, obs.n_items)))
    weight, shrunk, tau2 = shrink(own, var, np.array([pooled.beta]))
    return ShrunkSlopes(own=own[0], own_var=var[0], pooled=pooled.beta, tau2=float(tau2[0]), weight=weight[0],
                        shrunk=shrunk[0])

# ---- vectorised over bootstrap replicates (item weightings), with a bend shared by the models when the fit bends --
# (report.length_per_model: `--length-slopes per-model` in the leaderboard)


def _own_design(obs: Observations, ref: int, bent: bool) -> FloatArray:
    """Model dummies (but the reference model's), x per model, and max(x, 0) shared when the fit bends."""
    k = obs.n_models
    others = [m for m in range(k) if m != ref]
    onehot = (obs.model[:, None] == np.arange(k)[None, :]).astype(float)
    cols = [onehot[:, others], onehot * obs.x[:, None]]
    if bent:
        cols.append(np.maximum(obs.x, 0.0)[:, None])
    return np.column_stack(cols)


def own_slopes(obs: Observations, bent: bool, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(replicates × models) own slopes b_m and their variances σ̂² [(X'X)⁻¹]_mm, one row per item weighting;
    NaN for a model whose writings have no length in the weighting (no spread of x)."""
    ref = reference_model(obs)
    k = obs.n_models
    sums = _item_sums(obs, _own_design(obs, ref, bent))
    a = np.einsum("bi,ipq->bpq", weights, sums.cxx)
    b = np.einsum("bi,ip->bp", weights, sums.cxy)
    inv = np.linalg.pinv(a, rcond=1e-10, hermitian=True)
    theta = np.einsum("bpq,bq->bp", inv, b)
    safe = np.where(sums.n > 0, sums.n, 1.0)
    cyy = np.bincount(obs.item, weights=obs.y ** 2, minlength=obs.n_items) - sums.sy ** 2 / safe
    rss = weights @ cyy - (theta * b).sum(axis=1)
    dof = weights @ sums.n - weights @ (sums.n > 0) - np.linalg.matrix_rank(a, hermitian=True)
    sigma2 = np.where(dof > 0, rss / np.where(dof > 0, dof, 1.0), np.nan)
    slopes = slice(k - 1, 2 * k - 1)
    var = sigma2[:, None] * np.diagonal(inv, axis1=1, axis2=2)[:, slopes]
    x2 = _per_item(obs.item, (obs.model[:, None] == np.arange(k)[None, :]) * obs.x[:, None] ** 2, obs.n_items)
    spread = weights @ x2 > 0
    return np.where(spread, theta[:, slopes], np.nan), np.where(spread, var, np.nan)


def shrink(own: FloatArray, var: FloatArray, pooled: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, shrunk slopes, τ²) per replicate: `shrunk_slopes`' formula, row by row; a model without its
    own slope keeps the pooled one."""
    ok = np.isfinite(own) & np.isfinite(var) & (var > 0)
    count = ok.sum(axis=1)
    mean = np.where(ok, own, 0.0).sum(axis=1) / np.maximum(count, 1)
    between = (np.where(ok, own - mean[:, None], 0.0) ** 2).sum(axis=1) / np.maximum(count - 1, 1)
    noise = np.where(ok, var, 0.0).sum(axis=1) / np.maximum(count, 1)
    tau2 = np.where(count >= 2, np.maximum(0.0, between - noise), 0.0)
    safe_var = np.where(ok, var, 1.0)
    weight = np.where(ok & (tau2[:, None] > 0), tau2[:, None] / (tau2[:, None] + safe_var), 0.0)
    shrunk = np.where(ok, weight * np.nan_to_num(own) + (1 - weight) * pooled[:, None], pooled[:, None])
    return weight, shrunk, tau2


def item_fit(obs: Observations, values: FloatArray, weights: FloatArray) -> FloatArray:
    """(replicates × models) α_m + mean δ of the model + item fit of `values` (replicates × writings), items
    weighted per replicate; NaN for a model without a within-item contrast in the weighting."""
    k, ref = obs.n_models, reference_model(obs)
    others = [m for m in range(k) if m != ref]
    onehot = (obs.model[:, None] == np.arange(k)[None, :]).astype(float)
    sums = _item_sums(obs, onehot[:, others])
    cells = np.zeros((values.shape[0], obs.n_items, k))
    flat = obs.item * k + obs.model
    if np.unique(flat).size != flat.size:
        raise ValueError("one writing per model and item expected in the length fit")
    cells[:, obs.item, obs.model] = values
    sv = cells.sum(axis=2)
    safe = np.where(sums.n > 0, sums.n, 1.0)
    cxy = cells[:, :, others] - sums.sx[None, :, :] * (sv / safe)[:, :, None]
    a = np.einsum("bi,ipq->bpq", weights, sums.cxx)
    theta = np.einsum("bpq,bq->bp", np.linalg.pinv(a, rcond=1e-10, hermitian=True),
                      np.einsum("bi,bip->bp", weights, cxy))
    alpha = np.zeros((values.shape[0], k))
    alpha[:, others] = theta
    delta = (sv - np.einsum("ip,bp->bi", sums.sx, theta)) / safe
    w = weights * (sums.n > 0)[None, :]
    mean_delta = (w * delta).sum(axis=1) / w.sum(axis=1)
    contrast = np.einsum("bi,im->bm", w, ((sums.model_rows > 0) & (sums.n[:, None] > 1)).astype(float))
    result: FloatArray = np.where(contrast > 0, alpha, np.nan) + mean_delta[:, None]
    return result
