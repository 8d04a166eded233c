"""Agreement statistics on plain arrays: Cohen's κ (unweighted or weighted), ICC(2,k), and interval α over the
columns two raters share. What a rater, a writing or a judge is stays above, in `meta.agreement` (human raters)
and `meta.panel_agreement` (a judge panel); here are only the numbers.

ICC(2,k) — two-way random effects, absolute agreement, the reliability of the k raters' mean (Shrout & Fleiss
1979):

    ICC(2,k) = (MS_R − MS_E) / (MS_R + (MS_C − MS_E) / n)

with MS_R the rows' (writings') mean square, MS_C the columns' (raters'), MS_E the residual, n the rows.
"""

from __future__ import annotations

import numpy as np

from howtobench.stats.alpha import alpha


def round_half_up(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer with .5 going up (3.5 -> 4), as a rater would read the scale."""
    return np.floor(x + 0.5)


def cohen_kappa(a: np.ndarray, b: np.ndarray, power: int = 0) -> float:
    """Cohen's κ of two label vectors: unweighted (power 0) or with disagreement weights |x − y|^power.

    NaN when the expected disagreement is zero (both raters always give one and the same label)."""
    labels = np.unique(np.concatenate([a, b]))
    confusion = np.zeros((labels.size, labels.size))
    np.add.at(confusion, (np.searchsorted(labels, a), np.searchsorted(labels, b)), 1.0)
    confusion /= confusion.sum()
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0))
    gap = np.abs(labels[:, None] - labels[None, :])
    weights = (gap > 0).astype(float) if power == 0 else gap**power
    disagreement = float((weights * expected).sum())
    return float("nan") if disagreement == 0 else 1.0 - float((weights * confusion).sum()) / disagreement


def icc2k(matrix: np.ndarray) -> float:
    """ICC(2,k) of a complete (writings × judges) matrix; NaN with fewer than 2 of either or no variance."""
    n, k = matrix.shape
    if n < 2 or k < 2:
        return float("nan")
    grand = matrix.mean()
    rows, cols = matrix.mean(axis=1), matrix.mean(axis=0)
    ms_r = k * ((rows - grand) ** 2).sum() / (n - 1)
    ms_c = n * ((cols - grand) ** 2).sum() / (k - 1)
    ms_e = ((matrix - rows[:, None] - cols[None, :] + grand) ** 2).sum() / ((n - 1) * (k - 1))
    denominator = ms_r + (ms_c - ms_e) / n
    return float((ms_r - ms_e) / denominator) if denominator > 0 else float("nan")


def interval_alpha(matrix: np.ndarray) -> float:
    """Krippendorff's α, interval level, of a (judges × writings) matrix with NaN gaps; NaN when undefined."""
    pairable = (np.isfinite(matrix).sum(axis=0) >= 2)
    if pairable.sum() < 2:
        return float("nan")
    return alpha(matrix[:, pairable], "interval")
