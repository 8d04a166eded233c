"""The judge's own length response, measured on pairs: one writing judged as written and as a padded or trimmed
variant (content fixed, length varied), so the slope is the judge's length bias, not an association.

The leaderboard's length fit (`stats.length_fit`) learns β from which writings are long and which score well:
when longer writings are also better, "control" removes real quality, and a judge that rewards length only above
the reference (where 80% of the release's writings never go) is learnt with a fraction of its reward. A pair has
one writing's content at two lengths: the score change over the length change is what the judge pays for length.
With x = ln(writing chars / reference chars) and the features of `report.length_control` (a slope below the
reference and one above it), each pair gives

    y_after − y_before = β_below · (min(x_after, 0) − min(x_before, 0)) + β_above · (max(x_after, 0) − max(x_before, 0))

fitted by least squares without an intercept; one slope when either side has fewer than `MIN_SIDE` pairs moving
there. Intervals: 95% percentile bootstrap over the pairs (seeded). Used by `robustness` (its pad / repeat pairs)
and by `--length-anchor` (pad / truncate variants judged for the purpose).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.errors import DataError
from howtobench.judges.base import EmptyConvention, Judgment, counted_score
from howtobench.stats import FloatArray, percentile_ci, rng_for

MIN_SIDE = 10
"""Pairs whose length moves on a side of the reference needed for that side's own slope."""


@dataclass(frozen=True)
class PairSlope:
    """The slope(s) measured on pairs: below the reference, and above it when `bent`; with intervals."""

    beta: float
    beta_ci: tuple[float, float] | None
    beta_above: float | None
    beta_above_ci: tuple[float, float] | None
    n: int

    @property
    def betas(self) -> FloatArray:
        return np.array([self.beta] if self.beta_above is None else [self.beta, self.beta_above])


@dataclass(frozen=True)
class Pair:
    """One writing at two lengths: log ratios to the reference and scores, before and after."""

    x_before: float
    x_after: float
    y_before: float
    y_after: float


def pair_features(x: FloatArray, bent: bool) -> FloatArray:
    """min(x, 0), max(x, 0) when bent, else x itself (as a column)."""
    return np.column_stack([np.minimum(x, 0.0), np.maximum(x, 0.0)]) if bent else x.reshape(-1, 1)


def length_change(pairs: Sequence[Pair], bent: bool) -> FloatArray:
    """(pairs × features) change of the length features from before to after."""
    before = np.array([p.x_before for p in pairs])
    after = np.array([p.x_after for p in pairs])
    return pair_features(after, bent) - pair_features(before, bent)


def pair_slope(pairs: Sequence[Pair], *, seed: int = 0, n_boot: int = 1000, label: str = "anchor",
               bend: bool = True) -> PairSlope | None:
    """The judge's slope(s) from `pairs`; None when no pair changes length."""
    if not pairs:
        return None
    moved = length_change(pairs, True)
    bent = bend and all(int((np.abs(moved[:, k]) > 1e-12).sum()) >= MIN_SIDE for k in range(2))
    d = length_change(pairs, bent)
    dy = np.array([p.y_after - p.y_before for p in pairs])
    gram = d.T @ d
    if np.linalg.matrix_rank(gram) < d.shape[1]:
        return None if bent is False else pair_slope(pairs, seed=seed, n_boot=n_boot, label=label, bend=False)
    theta = np.linalg.solve(gram, d.T @ dy)
    cis: list[tuple[float, float] | None] = [None] * d.shape[1]
    if n_boot > 0:
        idx = rng_for(seed, f"length-anchor|{label}").integers(0, len(pairs), size=(n_boot, len(pairs)))
        a = np.einsum("bnp,bnq->bpq", d[idx], d[idx])
        b = np.einsum("bnp,bn->bp", d[idx], dy[idx])
        ok = np.linalg.matrix_rank(a) == d.shape[1]
        reps = np.full((n_boot, d.shape[1]), np.nan)
        reps[ok] = np.linalg.solve(a[ok], b[ok][:, :, None])[:, :, 0]
        cis = [_ci(reps[:, k]) for k in range(d.shape[1])]
    return PairSlope(float(theta[0]), cis[0], float(theta[1]) if bent else None, cis[1] if bent else None,
                     len(pairs))


def _ci(values: FloatArray) -> tuple[float, float] | None:
    low, high = percentile_ci(values)
    return None if math.isnan(low) else (low, high)


def _x(j: Judgment) -> float | None:
    if not (j.writing_chars and j.reference_chars):
        return None
    return math.log(j.writing_chars / j.reference_chars)


def judgment_pairs(originals: Mapping[tuple[str, str, str], Judgment], variants: Sequence[Judgment], source: str,
                   empty: EmptyConvention = "exclude") -> list[Pair]:
    """Pairs of each variant (model "<model>+<kind>") with the original writing it came from (same item), where
    both have a score and both lengths."""
    out = []
    for j in variants:
        before = originals.get((j.task, j.item_id, j.model.removesuffix(source)))
        if before is None:
            continue
        a, b = counted_score(before, empty), counted_score(j, empty)
        xa, xb = _x(before), _x(j)
        if a is None or b is None or xa is None or xb is None:
            continue
        out.append(Pair(xa, xb, a, b))
    return out


ANCHOR_KINDS: tuple[str, ...] = ("pad", "truncate")
"""The perturbations that change length and keep content: filler paragraphs appended, the writing cut short."""


def anchor_pairs(originals: Iterable[Judgment], anchor: Sequence[Judgment],
                 empty: EmptyConvention = "exclude") -> list[Pair]:
    """Every pad / truncate variant in `anchor` (model "<model>+pad", as `howtobench robustness` writes them) with
    the original it came from: the anchor file's own original when it has one, else the leaderboard's."""
    keyed = {(j.task, j.item_id, j.model): j for j in originals}
    keyed |= {(j.task, j.item_id, j.model): j for j in anchor if not _variant_kind(j.model)}
    out: list[Pair] = []
    for kind in ANCHOR_KINDS:
        out += judgment_pairs(keyed, [j for j in anchor if _variant_kind(j.model) == kind], f"+{kind}", empty)
    return out


def _variant_kind(model: str) -> str | None:
    return next((k for k in ANCHOR_KINDS if model.endswith(f"+{k}")), None)


def measured_slope(originals: Iterable[Judgment], anchor: Sequence[Judgment], *, empty: EmptyConvention,
                   seed: int, n_boot: int) -> PairSlope:
    """The judge's slope from the anchor judgments; a file without a usable pair is an error naming what it needs."""
    methods = {j.method for j in anchor}
    pairs = anchor_pairs(originals, anchor, empty)
    slope = pair_slope(pairs, seed=seed, n_boot=n_boot) if pairs else None
    if slope is None:
        raise DataError(
            f"--length-anchor: {len(anchor)} judgments ({', '.join(sorted(methods)) or 'none'}) give no pad/truncate "
            "pair with a length change (variants named MODEL+pad / MODEL+truncate, with their original, scores and "
            "both lengths, as `howtobench robustness --kinds pad,truncate` writes them)")
    return slope
