"""Inter-annotator agreement of human ratings, each statistic named with its variant.

The paper reports Cohen's κ (0.71) and Pearson (0.87) for its protocol of two raters per writing, so the
default is what that protocol computes: every pair of raters that rated the same writing is one observation
pair (raters in name order), Cohen's κ unweighted on the scores rounded half up to integers (the 1-5 scale),
Pearson on the raw scores, and Krippendorff's α (interval) over the rater × writing matrix with gaps.

Named options, because unweighted κ treats 4 vs 5 like 1 vs 10 and pairs are a poor fit for 3+ raters:
  * κ (`KAPPAS`): "cohen" (unweighted), "cohen-linear" / "cohen-quadratic" (disagreement weights |x − y| and
    (x − y)² on the rounded score values; κ_w = 1 − Σ w·observed / Σ w·expected), "fleiss" (Fleiss' κ over all
    raters of each writing at once; writings may have different numbers of raters: P_i = (Σ_j n_ij² − n_i) /
    (n_i (n_i − 1)), P_e = Σ_j p_j² with p_j the share of all ratings in category j);
  * α (`ALPHAS`): the `krippendorff` package's levels of measurement: interval, ordinal, nominal, ratio
    (computed in closed form by `stats.alpha`, equal to the package, without its units × V × V arrays).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from howtobench.meta.human import HumanRating, WritingKey
from howtobench.stats.agreement import cohen_kappa, round_half_up
from howtobench.stats.alpha import alpha

KAPPAS: dict[str, str] = {
    "cohen": "unweighted; rater pairs in name order; scores rounded to integers",
    "cohen-linear": "linear weights |x − y|; rater pairs in name order; scores rounded to integers",
    "cohen-quadratic": "quadratic weights (x − y)²; rater pairs in name order; scores rounded to integers",
    "fleiss": "all raters of a writing at once; scores rounded to integers",
}
Level = Literal["interval", "ordinal", "nominal", "ratio"]
ALPHAS: dict[str, Level] = {"interval": "interval", "ordinal": "ordinal", "nominal": "nominal", "ratio": "ratio"}
_POWER = {"cohen": 0, "cohen-linear": 1, "cohen-quadratic": 2}


@dataclass(frozen=True)
class Statistic:
    """One agreement number with what it is, which variant, and what it was computed over."""

    name: str
    variant: str
    value: float
    over: str
    n: int


@dataclass(frozen=True)
class Agreement:
    """The requested statistics and the size of the ratings they describe."""

    statistics: tuple[Statistic, ...]
    pairs: int
    writings: int
    raters: int
    most_raters: int
    """The largest number of raters on one writing (3+ means Cohen pools several pairs per writing)."""

    def get(self, name: str, variant: str) -> float:
        return next(s.value for s in self.statistics if s.name == name and s.variant == variant)


def _by_writing(ratings: list[HumanRating]) -> dict[WritingKey, list[HumanRating]]:
    per_writing: dict[WritingKey, list[HumanRating]] = defaultdict(list)
    for r in ratings:
        per_writing[r.writing].append(r)
    return per_writing


def rater_pairs(ratings: list[HumanRating]) -> np.ndarray:
    """(n_pairs, 2) scores: every pair of distinct raters on the same writing, raters in name order."""
    pairs = [
        (a.score, b.score)
        for group in _by_writing(ratings).values()
        for a, b in itertools.combinations(sorted(group, key=lambda r: r.rater), 2)
    ]
    return np.asarray(pairs, dtype=float).reshape(-1, 2)


def fleiss_kappa(ratings: list[HumanRating]) -> tuple[float, int]:
    """Fleiss' κ on rounded scores over the writings with 2+ raters, and how many writings that is."""
    groups = [round_half_up(np.array([r.score for r in g])) for g in _by_writing(ratings).values() if len(g) >= 2]
    if not groups:
        return float("nan"), 0
    labels = np.unique(np.concatenate(groups))
    counts = np.array([[np.count_nonzero(g == lab) for lab in labels] for g in groups], dtype=float)
    n_i = counts.sum(axis=1)
    p_bar = float(np.mean(((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))))
    p_e = float(((counts.sum(axis=0) / n_i.sum()) ** 2).sum())
    return (float("nan") if p_e == 1.0 else (p_bar - p_e) / (1.0 - p_e)), len(groups)


def krippendorff_alpha(ratings: list[HumanRating], level: str = "interval") -> float:
    """Krippendorff's α at `level` over the rater x writing matrix (NaN where a rater did not rate a writing)."""
    raters = sorted({r.rater for r in ratings})
    writings = sorted({r.writing for r in ratings})
    ri = {name: i for i, name in enumerate(raters)}
    wi = {key: j for j, key in enumerate(writings)}
    matrix = np.full((len(raters), len(writings)), np.nan)
    for r in ratings:
        matrix[ri[r.rater], wi[r.writing]] = r.score
    return alpha(matrix, ALPHAS[level])


def _check(kappas: Sequence[str], alphas: Sequence[str]) -> None:
    bad = [k for k in kappas if k not in KAPPAS] + [a for a in alphas if a not in ALPHAS]
    if bad:
        raise ValueError(f"unknown agreement variant(s) {', '.join(map(repr, bad))}: kappa is one of "
                         f"{', '.join(KAPPAS)}; alpha one of {', '.join(ALPHAS)}")


def _kappa(name: str, ratings: list[HumanRating], pairs: np.ndarray) -> Statistic:
    if name == "fleiss":
        value, n = fleiss_kappa(ratings)
        return Statistic("Fleiss' κ", KAPPAS[name], value, "writings with 2+ raters", n)
    enough = len(pairs) >= 2
    a, b = round_half_up(pairs[:, 0]), round_half_up(pairs[:, 1])
    value = cohen_kappa(a, b, _POWER[name]) if enough else float("nan")
    return Statistic("Cohen's κ", KAPPAS[name], value, "rater pairs", len(pairs))


def _pearson(pairs: np.ndarray) -> Statistic:
    constant = len(pairs) < 2 or np.ptp(pairs[:, 0]) == 0 or np.ptp(pairs[:, 1]) == 0
    value = float("nan") if constant else float(stats.pearsonr(pairs[:, 0], pairs[:, 1])[0])
    return Statistic("Pearson r", "raw scores; rater pairs in name order", value, "rater pairs", len(pairs))


def agreement(ratings: list[HumanRating], kappas: Sequence[str] = ("cohen",),
              alphas: Sequence[str] = ("interval",)) -> Agreement:
    """The requested κ variants, Pearson, and the requested α levels; NaN where a statistic is undefined."""
    _check(kappas, alphas)
    pairs = rater_pairs(ratings)
    per_writing = _by_writing(ratings)
    values = [_kappa(k, ratings, pairs) for k in kappas] + [_pearson(pairs)]
    values += [Statistic("Krippendorff's α", a, krippendorff_alpha(ratings, a), "writings", len(per_writing))
               for a in alphas]
    return Agreement(tuple(values), len(pairs), len(per_writing), len({r.rater for r in ratings}),
                     max(len(g) for g in per_writing.values()))
