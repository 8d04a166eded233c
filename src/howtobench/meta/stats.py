"""Vectorised correlation and bootstrap primitives (numpy only, rows = replicates).

Each function correlates x[r] with y[r] for every row r at once, so a bootstrap of 1,000
resamples is one array operation instead of 1,000 scipy calls. They agree with scipy's
`pearsonr`, `spearmanr` (average ranks) and `kendalltau` (tau-b) on untied and tied data;
a row with no variance gives NaN, as scipy does.

Ties are only ties if equal numbers compare equal: a mean computed as sum / n can give
3.4999999999999996 for one model and 3.5 for another when both are exactly 7/2, and Kendall's /
Spearman's tie corrections then never apply. `tie_round` rounds such derived values to
`TIE_DECIMALS` decimals before they are ranked (values that agree to 9 decimals are tied).

Intervals (`INTERVALS`): "percentile" takes the 2.5 / 97.5 % quantiles of the bootstrap replicates;
"bca" (default) is the bias-corrected and accelerated interval of Efron & Tibshirani (1993, 14.3),
computed as `scipy.stats.bootstrap(method="BCa")` does from the same resamples (z0 from the share of
replicates below the estimate, acceleration from the jackknife), which corrects the downward pull that
resampling noise puts on a correlation of means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

CorrFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair; x, y shape (rows, n)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
    out: np.ndarray = np.clip(_ratio((xc * yc).sum(axis=1), den), -1.0, 1.0)
    return out


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rho: Pearson of average ranks (ties share their mean rank)."""
    return pearson_rows(stats.rankdata(x, axis=1), stats.rankdata(y, axis=1))


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b: sum(sx*sy) / sqrt(sum(sx^2) * sum(sy^2)) over all pairs i<j (ties drop out of sx^2 / sy^2)."""
    i, j = np.triu_indices(x.shape[1], k=1)
    sx = np.sign(x[:, i] - x[:, j])
    sy = np.sign(y[:, i] - y[:, j])
    den = np.sqrt((sx**2).sum(axis=1) * (sy**2).sum(axis=1))
    return _ratio((sx * sy).sum(axis=1), den)


METRICS: dict[str, CorrFn] = {"pearson": pearson_rows, "kendall": kendall_rows, "spearman": spearman_rows}
SYMBOLS: dict[str, str] = {"pearson": "ρ", "kendall": "τ", "spearman": "σ"}


TIE_DECIMALS = 9
INTERVALS: dict[str, str] = {"bca": "BCa", "percentile": "percentile"}
"""Interval methods by name -> the label printed with the numbers."""


def tie_round(values: np.ndarray, decimals: int = TIE_DECIMALS) -> np.ndarray:
    """Round derived scores (means) so that values equal up to floating-point error are exactly equal."""
    out: np.ndarray = np.round(values, decimals)
    return out


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap interval (NaN when undefined)."""

    value: float
    low: float = float("nan")
    high: float = float("nan")


def percentile_ci(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates, ignoring undefined (NaN) replicates."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def acceleration(jackknife: np.ndarray) -> float:
    """BCa acceleration a = sum(d^3) / (6 sum(d^2)^1.5), d = mean - jackknife value (undefined ones left out).

    All jackknife values equal (no spread) gives 0, no acceleration; scipy gives NaN there."""
    finite = jackknife[np.isfinite(jackknife)]
    d = finite.mean() - finite if finite.size else finite
    den = 6.0 * float((d**2).sum()) ** 1.5
    return float((d**3).sum()) / den if den > 0 else 0.0


def bca_ci(replicates: np.ndarray, estimate: float, jackknife: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """BCa interval from bootstrap replicates, the point estimate and its jackknife (leave-one-out) values.

    Undefined (NaN) replicates are left out; NaN bounds when the estimate lies outside every replicate."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    share = (np.count_nonzero(finite < estimate) + np.count_nonzero(finite <= estimate)) / (2 * finite.size)
    z0 = float(special.ndtri(share))
    a = acceleration(jackknife)
    z = special.ndtri(np.array([(1.0 - level) / 2.0, (1.0 + level) / 2.0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = special.ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
    if not np.isfinite(probs).all():
        return float("nan"), float("nan")
    low, high = np.percentile(finite, 100.0 * probs)
    return float(low), float(high)


def interval(method: str, replicates: np.ndarray, estimate: float, jackknife: np.ndarray,
             level: float = 0.95) -> tuple[float, float]:
    """The interval of `method` ("bca" or "percentile")."""
    if method == "percentile":
        return percentile_ci(replicates, level)
    if method == "bca":
        return bca_ci(replicates, estimate, jackknife, level)
    raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, not {method!r}")


def resample_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n) indices drawn with replacement from a seeded generator (same seed, same resamples)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
