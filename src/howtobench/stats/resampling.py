"""Resampling statistics, in one place: bootstrap intervals (percentile and BCa), vectorised correlations and the
paired comparison of two models. Leaderboards, robustness tables and `meta correlate` all draw from here.

One seeding convention: every generator is `rng_for(seed, label)`, `numpy.random.default_rng` seeded from the
caller's seed plus a stable CRC-32 of a label naming the quantity (a leaderboard cell, a paired comparison, a
robustness delta), so one number's interval does not depend on which others were computed before it and the
same command prints the same bounds on every machine. `label=None` is the plain seed: `meta correlate` draws one
set of resamples for every metric of a table from it (`resample_indices`), so its metrics are compared on the
same resamples.

Following sacrebleu's significance module, per-item scores are computed once (an array per model) and the
statistics only resample indices into those arrays, so 1,000 replicates over 1,302 items cost a few milliseconds.

Intervals (`INTERVALS`): "percentile" takes the 2.5 / 97.5 % quantiles of the bootstrap replicates; "bca" is the
bias-corrected and accelerated interval of Efron & Tibshirani (1993, 14.3), computed as
`scipy.stats.bootstrap(method="BCa")` does from the same resamples (z0 from the share of replicates below the
estimate, acceleration from the jackknife), which corrects the downward pull that resampling noise puts on a
correlation of means. Leaderboard cells use percentile intervals: a mean of per-item scores is not biased by
resampling, so BCa would change nothing there.

Correlations (`METRICS`) correlate x[r] with y[r] for every row r at once (rows = replicates), so a bootstrap of
1,000 resamples is one array operation instead of 1,000 scipy calls. They agree with scipy's `pearsonr`,
`spearmanr` (average ranks) and `kendalltau` (tau-b) on untied and tied data; a row with no variance gives NaN,
as scipy does. Ties are only ties if equal numbers compare equal: a mean computed as sum / n can give
3.4999999999999996 for one model and 3.5 for another when both are exactly 7/2, so `tie_round` rounds such
derived values to `TIE_DECIMALS` decimals before they are ranked.

The paired test between two models uses only the items both have a score for: the mean difference with its 95%
paired-bootstrap interval (items resampled jointly), and the two-sided Wilcoxon signed-rank p-value, which asks
whether the per-item differences are centred on zero without assuming they are normal.

scipy is imported inside the functions that need it: it costs about a second of start-up that `judge --help`
and a judge run need not pay (tests/cli/test_startup.py).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
CorrFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
ALPHA = 0.05


def rng_for(seed: int, label: str | None = None) -> np.random.Generator:
    """The generator of (seed, label): the label hashed with CRC-32 (stable across runs); None: the seed alone."""
    return np.random.default_rng(seed if label is None else [seed, zlib.crc32(label.encode("utf-8"))])


def resample_indices(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n) indices drawn with replacement (the same generator state, the same resamples)."""
    return rng.integers(0, n, size=(n_boot, n))

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
    from scipy import stats

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
    from scipy import special

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


def bootstrap_ci(values: FloatArray, *, n_boot: int, rng: np.random.Generator) -> tuple[float, float] | None:
    """Percentile 95% interval of the mean, resampling items with replacement; None when it cannot be formed."""
    n = values.shape[0]
    if n == 0 or n_boot <= 0:
        return None
    idx = rng.integers(0, n, size=(n_boot, n))
    means = values[idx].mean(axis=1)
    low, high = np.percentile(means, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedResult:
    """Model `first` against model `second` on their shared items (difference = first − second).

    `first` is ranked above `second`, so a negative difference says the shared items order the pair the other
    way round (possible when failed judgments leave the two means on different items): `against_order`."""

    first: str
    second: str
    n_shared: int
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_wilcoxon: float | None

    @property
    def against_order(self) -> bool:
        return self.mean_diff is not None and self.mean_diff < 0


def paired_compare(
    first: str, second: str, a: FloatArray, b: FloatArray, *, n_boot: int, rng: np.random.Generator
) -> PairedResult:
    """Compare two aligned per-item score arrays (NaN = no score); only items scored for both count."""
    shared = ~np.isnan(a) & ~np.isnan(b)
    diff = a[shared] - b[shared]
    n = int(diff.shape[0])
    if n == 0:
        return PairedResult(first, second, 0, None, None, None, None)
    ci = bootstrap_ci(diff, n_boot=n_boot, rng=rng)
    return PairedResult(
        first=first,
        second=second,
        n_shared=n,
        mean_diff=float(diff.mean()),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        p_wilcoxon=wilcoxon_p(diff),
    )


def wilcoxon_p(diff: FloatArray) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value; 1.0 when every difference is zero, None below 2 items."""
    if diff.shape[0] < 2:
        return None
    if not np.any(diff != 0):
        return 1.0
    from scipy import stats

    p = float(stats.wilcoxon(diff, zero_method="wilcox", alternative="two-sided").pvalue)
    return None if math.isnan(p) else p
