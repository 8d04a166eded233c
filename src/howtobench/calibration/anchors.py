"""Which writings the new judge re-judges: a stratified sample of the reference judge's scored writings.

Strata are task × genre × model, so every task, genre and model the reference files hold is seen by both judges
in its own share (a map fitted on Open alone would say nothing about Completion, and a model missing from the
anchors could not show a change of rank). Each stratum gets a share proportional to its size (largest remainders,
at least one writing per stratum when the total allows). Inside a stratum the writings are taken at even steps
through their reference-score order, its lowest and highest included, so both ends of the score range are covered:
an isotonic map is only defined between the lowest and the highest anchor.

How many: a calibrated mean is at best as precise as a mean of the anchors' reference scores, so the number of
anchors that buys a 95% interval of width W is about (2 · 1.96 · sd / W)², sd being the reference root scores'
spread (`anchors_for_width`). docs/calibration.md gives the widths measured by bench/calibration.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.judges.base import Judgment

Stratum = tuple[str, str, str]
Z95 = 1.959963984540054


@dataclass(frozen=True)
class AnchorPlan:
    """The anchors chosen, and how: `strata` counts (chosen, available) per task × genre × model."""

    anchors: tuple[Judgment, ...]
    strata: dict[Stratum, tuple[int, int]]
    width: float | None
    sd: float


def scored(judgments: Sequence[Judgment]) -> list[Judgment]:
    """The judgments that can anchor a map: a root score, not failed, not an empty writing."""
    return [j for j in judgments if j.score is not None and j.status in ("ok", "renormalized")]


def anchors_for_width(sd: float, width: float) -> int:
    """Anchors for a 95% interval of `width` around a calibrated mean of scores with spread `sd`."""
    if width <= 0:
        raise ValueError(f"the target width must be positive (got {width})")
    return max(2, math.ceil((2 * Z95 * sd / width) ** 2))


def allocate(sizes: dict[Stratum, int], n: int) -> dict[Stratum, int]:
    """`n` spread over strata in proportion to their sizes (largest remainders), each at most its size and at least
    one when `n` reaches the number of strata."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    floor_one = n >= len(sizes)
    share = {s: n * k / total for s, k in sizes.items()}
    got = {s: min(sizes[s], max(int(v), 1 if floor_one else 0)) for s, v in share.items()}
    by_remainder = sorted(sizes, key=lambda s: (-(share[s] - int(share[s])), s))
    while sum(got.values()) < n:
        progressed = False
        for s in by_remainder:
            if sum(got.values()) >= n:
                break
            if got[s] < sizes[s]:
                got[s] += 1
                progressed = True
        if not progressed:
            break
    while sum(got.values()) > n:  # the floor of one can overshoot: take back from the largest shares
        s = max((s for s in got if got[s] > 1), key=lambda s: (got[s] - share[s], s))
        got[s] -= 1
    return got


def _spread(members: list[Judgment], k: int, rng: np.random.Generator) -> list[Judgment]:
    """`k` of a stratum's judgments at even steps through their score order, its lowest and highest included
    (one alone: a random one)."""
    ordered = sorted(members, key=lambda j: (j.score or 0.0, j.item_id))
    if k >= len(ordered):
        return ordered
    if k == 1:
        return [ordered[int(rng.integers(0, len(ordered)))]]
    return [ordered[int(round(p))] for p in np.linspace(0, len(ordered) - 1, k)]


def choose_anchors(reference: Sequence[Judgment], *, n: int | None = None, width: float | None = None,
                   seed: int = 0) -> AnchorPlan:
    """Stratified anchors from the reference judgments: `n` of them, or as many as `width` asks for."""
    pool = scored(reference)
    if len(pool) < 2:
        raise ValueError("the reference files hold fewer than two scored judgments: nothing to anchor a map on")
    sd = float(np.std([j.score for j in pool if j.score is not None], ddof=1))
    if n is None:
        if width is None:
            raise ValueError("give the number of anchors or a target interval width")
        n = anchors_for_width(sd, width)
    strata: dict[Stratum, list[Judgment]] = {}
    for j in pool:
        strata.setdefault((j.task, j.genre, j.model), []).append(j)
    take = allocate({s: len(v) for s, v in strata.items()}, n)
    rng = np.random.default_rng(seed)
    chosen = [a for s in sorted(strata) for a in _spread(strata[s], take[s], rng)]
    return AnchorPlan(tuple(chosen), {s: (take[s], len(strata[s])) for s in sorted(strata)}, width, sd)
