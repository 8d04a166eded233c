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

from howtobench.stats.length_fit import Observations, fit
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


def _own_slopes(obs: Observations) -> tuple[FloatArray, FloatArray]:
    """Every model's slope and its variance σ̂² [(X'X)⁻¹]_mm from the within-item regression with a slope per model
    (item effects shared, so a model's slope is not biased by the others' differing slopes); NaN where the data
    cannot say (a model without spread of x)."""
    k = obs.n_models
    onehot = (obs.model[:, None] == np.arange(k)[None, :]).astype(float)
    design = np.column_stack([onehot[:, 1:], onehot * obs.x[:, None]])
    counts = np.bincount(obs.item, minlength=obs.n_items).astype(float)
    safe = np.maximum(counts, 1.0)

    def demean(v: FloatArray) -> FloatArray:
        means = np.stack([np.bincount(obs.item, weights=c, minlength=obs.n_items) for c in np.atleast_2d(v.T)])
        centred: FloatArray = v - (means / safe).T[obs.item].reshape(v.shape)
        return centred

    xd, yd = demean(design), demean(obs.y)
    xtx = xd.T @ xd
    inv = np.linalg.pinv(xtx, rcond=1e-10, hermitian=True)
    theta = inv @ (xd.T @ yd)
    resid = yd - xd @ theta
    dof = obs.y.size - int((counts > 0).sum()) - np.linalg.matrix_rank(xtx)
    sigma2 = float(resid @ resid) / dof if dof > 0 else float("nan")
    var = sigma2 * np.diag(inv)[k - 1:]
    spread = np.bincount(obs.model, weights=obs.x ** 2, minlength=k) > 0
    own = np.where(spread, theta[k - 1:], np.nan)
    return own, np.where(spread, var, np.nan)


def shrunk_slopes(obs: Observations) -> ShrunkSlopes:
    """The formula of the module docstring on one-feature observations; a model without its own slope keeps β."""
    if obs.x.ndim != 1:
        raise ValueError("per-model slopes take one length feature")
    pooled = fit(obs)
    own, var = _own_slopes(obs)
    ok = np.isfinite(own) & np.isfinite(var)
    tau2 = float(max(0.0, np.var(own[ok], ddof=1) - var[ok].mean())) if ok.sum() >= 2 else 0.0
    weight = np.where(ok, tau2 / (tau2 + np.where(ok, var, 1.0)) if tau2 > 0 else 0.0, 0.0)
    shrunk = np.where(ok, weight * np.nan_to_num(own) + (1 - weight) * pooled.beta, pooled.beta)
    return ShrunkSlopes(own=own, own_var=var, pooled=pooled.beta, tau2=tau2, weight=weight, shrunk=shrunk)
