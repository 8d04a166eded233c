"""Fit a calibration new judge -> reference judge on the writings both scored (the anchors).

One map per node (the root `score`, then content / format / impression where both judges have them) over every
task's anchors (`pooled`), and one per task when that task has at least `MIN_TASK_ANCHORS` anchors with at least
`MIN_DISTINCT` distinct new scores: the judges may drift differently on Completion (no Format node) than on Open.
A writing is mapped by its task's map when there is one, else by the pooled map (`scope_for`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from howtobench.calibration.drift import drift_report
from howtobench.calibration.isotonic import MonotoneMap, bootstrap_maps, fit_monotone, mapped_replicates
from howtobench.calibration.record import POOLED, ROOT, Anchor, Calibration, MapFit, judge_info
from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment
from howtobench.stats import rng_for

MIN_TASK_ANCHORS = 30
MIN_DISTINCT = 3
MIN_ANCHORS = 10
NODE_ORDER = (ROOT, "content", "format", "impression")


def _values(j: Judgment) -> dict[str, float | None]:
    return {ROOT: j.score, **{k: v for k, v in j.nodes.items()}}


def pair_anchors(reference: Sequence[Judgment], new: Sequence[Judgment]) -> list[Anchor]:
    """Writings (item, model) with a root score under both judges (failed and empty writings are no anchors)."""
    usable = {"ok", "renormalized"}
    ref = {(j.item_id, j.model): j for j in reference if j.score is not None and j.status in usable}
    out = []
    for j in new:
        r = ref.get((j.item_id, j.model))
        if r is not None and j.score is not None and j.status in usable:
            out.append(Anchor(item_id=j.item_id, model=j.model, task=r.task, genre=r.genre,
                              reference=_values(r), new=_values(j)))
    return sorted(out, key=lambda a: (a.task, a.item_id, a.model))


def anchor_arrays(anchors: Sequence[Anchor], node: str, scope: str) -> tuple[np.ndarray, np.ndarray]:
    """(new, reference) scores of `node` over the anchors of `scope` that have both."""
    keep = [a for a in anchors if (scope == POOLED or a.task == scope)
            and a.new.get(node) is not None and a.reference.get(node) is not None]
    return (np.array([a.new[node] for a in keep], dtype=float),
            np.array([a.reference[node] for a in keep], dtype=float))


def _scopes(anchors: Sequence[Anchor], node: str) -> list[str]:
    scopes = [POOLED]
    for task in sorted({a.task for a in anchors}):
        x, _ = anchor_arrays(anchors, node, task)
        if x.size >= MIN_TASK_ANCHORS and np.unique(x).size >= MIN_DISTINCT:
            scopes.append(task)
    return scopes


def map_fit(anchors: Sequence[Anchor], node: str, scope: str, n_boot: int, seed: int) -> MapFit:
    """The map of one node in one scope with its in-sample RMSE and the median width of its bootstrap band."""
    x, y = anchor_arrays(anchors, node, scope)
    fitted = fit_monotone(x, y)
    boot = map_replicates(anchors, node, scope, n_boot, seed)
    band = mapped_replicates(boot, x)
    widths = np.percentile(band, 97.5, axis=0) - np.percentile(band, 2.5, axis=0) if band.size else np.array([0.0])
    return MapFit(node=node, scope=scope, knots_x=fitted.x.tolist(), knots_y=fitted.y.tolist(), n_anchors=int(x.size),
                  rmse=float(np.sqrt(np.mean((y - fitted(x)) ** 2))), band_width=float(np.median(widths)))


def map_replicates(anchors: Sequence[Anchor], node: str, scope: str, n_boot: int, seed: int) -> list[MonotoneMap]:
    """The bootstrap maps of one node and scope, seeded by (seed, node, scope): the same file, the same maps."""
    x, y = anchor_arrays(anchors, node, scope)
    return bootstrap_maps(x, y, n_boot, rng_for(seed, f"calibration|{node}|{scope}"))


def scope_for(cal: Calibration, node: str, task: str) -> str | None:
    """The scope whose map maps a writing of `task` (its task's, else the pooled one); None: no map of `node`."""
    if cal.map_for(node, task) is not None:
        return task
    return POOLED if cal.map_for(node, POOLED) is not None else None


def fit_calibration(reference: Sequence[Judgment], new: Sequence[Judgment], *, n_boot: int = 1000,
                    seed: int = 0, notes: Sequence[str] = ()) -> Calibration:
    """The calibration new -> reference from their judgments of the same writings."""
    ref_info, new_info = judge_info(reference, "reference"), judge_info(new, "new")
    anchors = pair_anchors(reference, new)
    if len(anchors) < MIN_ANCHORS:
        raise ConfigError(f"only {len(anchors)} writings have a root score from both judges; a map needs at least "
                          f"{MIN_ANCHORS} (are the --new judgments of the reference files' writings?)")
    nodes = [n for n in NODE_ORDER if anchor_arrays(anchors, n, POOLED)[0].size >= MIN_ANCHORS]
    maps = [map_fit(anchors, node, scope, n_boot, seed) for node in nodes for scope in _scopes(anchors, node)]
    return Calibration(kind="anchors", reference=ref_info, new=new_info, seed=seed, n_boot=n_boot, anchors=anchors,
                       maps=maps, drift=drift_report(anchors, n_boot=n_boot, seed=seed), notes=list(notes))
