"""How far two judges drift apart on the same anchor writings: the report `calibrate` prints and stores.

- writing level: Spearman's rho between the judges' root scores of the anchors (do they order writings alike?);
- system level: Kendall's tau between the models' anchor means under each judge (do they order models alike?);
- mean shift (new − reference) per task and per genre, with a 95% paired-bootstrap interval over anchors;
- rank changes beyond the interval: pairs of models the two judges order oppositely where, under each judge, the
  bootstrap interval of the two models' difference excludes zero (an opposite order inside the noise is not
  reported as drift).

Spearman and Kendall are scipy's (`spearmanr`, `kendalltau`, tau-b).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from howtobench.calibration.record import ROOT, Anchor
from howtobench.stats import percentile_ci, rng_for


def _pairs(anchors: Sequence[Anchor]) -> tuple[np.ndarray, np.ndarray, list[Anchor]]:
    kept = [a for a in anchors if a.reference.get(ROOT) is not None and a.new.get(ROOT) is not None]
    ref = np.array([a.reference[ROOT] for a in kept], dtype=float)
    new = np.array([a.new[ROOT] for a in kept], dtype=float)
    return ref, new, kept


def _shift(ref: np.ndarray, new: np.ndarray, rng: np.random.Generator, n_boot: int) -> dict[str, Any]:
    d = new - ref
    reps = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1) if d.size > 1 and n_boot else np.array([])
    low, high = percentile_ci(reps) if reps.size else (float("nan"), float("nan"))
    return {"n": int(d.size), "shift": float(d.mean()), "ci": [low, high]}


def _model_reps(values: dict[str, np.ndarray], n_boot: int, seed: int, label: str) -> dict[str, np.ndarray]:
    return {m: v[rng_for(seed, f"{label}|{m}").integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
            for m, v in values.items()}


def _rank_changes(kept: list[Anchor], ref: np.ndarray, new: np.ndarray, n_boot: int,
                  seed: int) -> list[dict[str, Any]]:
    models = sorted({a.model for a in kept})
    idx = {m: np.array([k for k, a in enumerate(kept) if a.model == m]) for m in models}
    if n_boot == 0 or any(v.size < 2 for v in idx.values()):
        return []
    reps_ref = _model_reps({m: ref[v] for m, v in idx.items()}, n_boot, seed, "drift-ref")
    reps_new = _model_reps({m: new[v] for m, v in idx.items()}, n_boot, seed, "drift-new")
    out = []
    for a, b in combinations(models, 2):
        lo_r, hi_r = percentile_ci(reps_ref[a] - reps_ref[b])
        lo_n, hi_n = percentile_ci(reps_new[a] - reps_new[b])
        if (lo_r > 0 and hi_n < 0) or (hi_r < 0 and lo_n > 0):
            out.append({"models": [a, b], "reference_diff_ci": [lo_r, hi_r], "new_diff_ci": [lo_n, hi_n]})
    return out


def drift_report(anchors: Sequence[Anchor], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The drift between the judges on `anchors` (root scores), as a JSON-ready dict."""
    from scipy import stats

    ref, new, kept = _pairs(anchors)
    report: dict[str, Any] = {"n_anchors": int(ref.size)}
    report["spearman"] = float(stats.spearmanr(ref, new).statistic) if ref.size > 2 else None
    models = sorted({a.model for a in kept})
    means_ref = [float(ref[[a.model == m for a in kept]].mean()) for m in models]
    means_new = [float(new[[a.model == m for a in kept]].mean()) for m in models]
    report["models"] = {m: {"reference": r, "new": n} for m, r, n in zip(models, means_ref, means_new, strict=True)}
    report["kendall"] = float(stats.kendalltau(means_ref, means_new).statistic) if len(models) > 2 else None
    for group in ("task", "genre"):
        keys = sorted({getattr(a, group) for a in kept})
        report[f"shift_by_{group}"] = {
            k: _shift(ref[mask], new[mask], rng_for(seed, f"shift|{group}|{k}"), n_boot)
            for k in keys if (mask := np.array([getattr(a, group) == k for a in kept])).any()}
    report["shift_all"] = _shift(ref, new, rng_for(seed, "shift|all"), n_boot)
    report["rank_changes"] = _rank_changes(kept, ref, new, n_boot, seed)
    return report


def drift_lines(report: dict[str, Any], ref_name: str, new_name: str) -> list[str]:
    """The drift report in a few lines for the terminal."""
    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    shift = report["shift_all"]
    lines = [f"drift of {new_name} from {ref_name} on {report['n_anchors']} anchors: writing-level Spearman "
             f"{num(report['spearman'])}, system-level Kendall {num(report['kendall'])} over "
             f"{len(report['models'])} models; mean shift {shift['shift']:+.3f} "
             f"[{shift['ci'][0]:+.3f}, {shift['ci'][1]:+.3f}]"]
    for group in ("task", "genre"):
        parts = [f"{k} {v['shift']:+.2f}" for k, v in report[f"shift_by_{group}"].items()]
        lines.append(f"mean shift by {group}: " + ", ".join(parts))
    changes = report["rank_changes"]
    lines.append("models whose order differs beyond the interval: " + (
        "; ".join(f"{c['models'][0]} vs {c['models'][1]}" for c in changes) if changes else "none"))
    return lines
