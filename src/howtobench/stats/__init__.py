"""Statistics below every analysis: pure numeric code, no I/O, nothing of the project above `errors`.

    resampling     bootstrap (percentile, BCa), vectorised correlations, the paired test; `rng_for`, the one
                   seeding convention (its names are handed on here: `from howtobench.stats import rng_for`)
    alpha          Krippendorff's α in closed form (interval, ordinal, nominal, ratio)
    agreement      Cohen's κ (weighted or not), ICC(2,k), interval α over pairable columns
    length_fit     the length model: score on ln(writing / reference chars) with model and item effects
    length_slopes  per-model length slopes shrunk toward the pooled one
"""

from howtobench.stats.resampling import (
    ALPHA,
    INTERVALS,
    METRICS,
    SYMBOLS,
    TIE_DECIMALS,
    CorrFn,
    Estimate,
    FloatArray,
    PairedResult,
    acceleration,
    bca_ci,
    bootstrap_ci,
    interval,
    kendall_rows,
    paired_compare,
    pearson_rows,
    percentile_ci,
    resample_indices,
    rng_for,
    spearman_rows,
    tie_round,
    wilcoxon_p,
)

__all__ = [
    "ALPHA", "INTERVALS", "METRICS", "SYMBOLS", "TIE_DECIMALS", "CorrFn", "Estimate", "FloatArray", "PairedResult",
    "acceleration", "bca_ci", "bootstrap_ci", "interval", "kendall_rows", "paired_compare", "pearson_rows",
    "percentile_ci", "resample_indices", "rng_for", "spearman_rows", "tie_round", "wilcoxon_p",
]
