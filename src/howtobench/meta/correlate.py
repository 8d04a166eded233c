"""Judge vs human correlations at system and sample level, per task and All (the shape of Table 3).

System level: for each model, the mean judge score and the mean human score over the items of
the task that both rated; Pearson / Kendall / Spearman across models. Sample level: for each item,
the correlation across the models both rated, then the mean over items; an item whose judge or human
scores do not vary has no correlation and is left out of that mean (as scipy gives NaN for it). 95%
intervals are percentile intervals of a seeded bootstrap over items (the unit that was sampled when the
meta-evaluation set was drawn); near +-1 a percentile interval can sit just below the point estimate.

Self-consistency results (judgments with n > 1 samples) give three rows: worst / best (min / max
over sample indices of the correlation obtained with only that sample's scores, per cell) and the
correlation of the mean of the samples. Cost is the sum of `usage.cost_usd` over the judgments of
rated writings; one sample of an n-sample run is billed 1/n of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.meta.human import WritingKey
from howtobench.meta.stats import METRICS, SYMBOLS, Estimate, percentile_ci, resample_indices
from howtobench.report.tables import Table

Scores = dict[WritingKey, float]
LEVELS: tuple[str, ...] = ("system", "sample")
TASKS: tuple[str, ...] = ("completion", "guide", "open", "all")
TASK_LABELS: dict[str, str] = {"completion": "Comp", "guide": "Guide", "open": "Open", "all": "All"}
CellKey = tuple[str, str, str]
"""(level, task, metric)."""


@dataclass(frozen=True)
class BootstrapSettings:
    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95


@dataclass
class CorrelationRow:
    """One method (or one self-consistency variant) against humans."""

    method: str
    cost_usd: float | None
    cells: dict[CellKey, Estimate] = field(default_factory=dict)
    n_items: dict[str, int] = field(default_factory=dict)
    n_models: dict[str, int] = field(default_factory=dict)


def _matrices(scores: Scores, human: Scores, items: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """items x models arrays of judge and human scores, NaN unless both exist (models rated on these items only)."""
    row = {item: k for k, item in enumerate(items)}
    models = sorted({m for (i, m) in scores if i in row and (i, m) in human})
    col = {m: k for k, m in enumerate(models)}
    judge = np.full((len(items), len(models)), np.nan)
    hum = np.full_like(judge, np.nan)
    for key, value in scores.items():
        item, model = key
        if item in row and model in col and key in human:
            judge[row[item], col[model]] = value
            hum[row[item], col[model]] = human[key]
    return judge, hum, models


def _nanmean(a: np.ndarray, axis: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.nansum(a, axis=axis)
        count = np.sum(np.isfinite(a), axis=axis)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _system(judge: np.ndarray, hum: np.ndarray, idx: np.ndarray, settings: BootstrapSettings) -> dict[str, Estimate]:
    """Per-model means over (resampled) items, correlated across models."""
    point_j, point_h = _nanmean(judge, 0)[None, :], _nanmean(hum, 0)[None, :]
    keep = np.isfinite(point_j[0]) & np.isfinite(point_h[0])
    boot_j = _nanmean(judge[idx][:, :, keep], 1)
    boot_h = _nanmean(hum[idx][:, :, keep], 1)
    out = {}
    for name, fn in METRICS.items():
        value = float(fn(point_j[:, keep], point_h[:, keep])[0]) if keep.sum() >= 2 else float("nan")
        reps = fn(boot_j, boot_h) if keep.sum() >= 2 else np.array([np.nan])
        out[name] = Estimate(value, *percentile_ci(reps, settings.level))
    return out


def per_item(judge: np.ndarray, hum: np.ndarray, metric: str) -> np.ndarray:
    """Correlation across models for every item (row); rows with gaps use only their rated models."""
    corr = METRICS[metric]
    complete = np.isfinite(judge).all(1)
    out = np.full(judge.shape[0], np.nan)
    if complete.any():
        out[complete] = corr(judge[complete], hum[complete])
    for r in np.flatnonzero(~complete):
        ok = np.isfinite(judge[r])
        if ok.sum() >= 2:
            out[r] = corr(judge[r, ok][None, :], hum[r, ok][None, :])[0]
    return out


def _sample(judge: np.ndarray, hum: np.ndarray, idx: np.ndarray, settings: BootstrapSettings) -> dict[str, Estimate]:
    """Mean over items of the per-item correlation; bootstrap resamples the per-item values."""
    out = {}
    for name in METRICS:
        c = per_item(judge, hum, name)
        value = float(np.nanmean(c)) if np.isfinite(c).any() else float("nan")
        out[name] = Estimate(value, *percentile_ci(_nanmean(c[idx], 1), settings.level))
    return out


def correlate_scores(
    scores: Scores, human: Scores, item_tasks: dict[str, str], settings: BootstrapSettings | None = None
) -> tuple[dict[CellKey, Estimate], dict[str, int], dict[str, int]]:
    """Every (level, task, metric) cell for one set of judge scores, plus items and models used per task."""
    settings = settings or BootstrapSettings()
    cells: dict[CellKey, Estimate] = {}
    n_items: dict[str, int] = {}
    n_models: dict[str, int] = {}
    rated = {i for (i, m) in scores if (i, m) in human}
    for task in TASKS:
        items = sorted(i for i in rated if task == "all" or item_tasks.get(i) == task)
        n_items[task] = len(items)
        if not items:
            continue
        judge, hum, models = _matrices(scores, human, items)
        n_models[task] = len(models)
        idx = resample_indices(len(items), settings.n_boot, settings.seed)
        for level, fn in (("system", _system), ("sample", _sample)):
            for metric, est in fn(judge, hum, idx, settings).items():
                cells[(level, task, metric)] = est
    return cells, n_items, n_models


def final_scores(judgments: Iterable[Judgment]) -> Scores:
    """Writing -> final score, leaving out judgments without one (failures are not numbers)."""
    return {(j.item_id, j.model): j.score for j in judgments if j.score is not None}


def sample_scores(judgments: list[Judgment], index: int) -> Scores:
    """Writing -> the score of sample `index` (self-consistency), where that sample succeeded."""
    out: Scores = {}
    for j in judgments:
        if len(j.samples) > index and j.samples[index].score is not None:
            out[(j.item_id, j.model)] = float(j.samples[index].score)  # type: ignore[arg-type]
    return out


def mean_sample_scores(judgments: list[Judgment]) -> Scores:
    """Writing -> mean of its successful samples' scores."""
    out: Scores = {}
    for j in judgments:
        vals = [s.score for s in j.samples if s.score is not None]
        if vals:
            out[(j.item_id, j.model)] = float(np.mean(vals))
    return out


def total_cost(judgments: list[Judgment], human: Scores) -> float | None:
    """Summed cost of the judgments of rated writings; None for methods that made no model call."""
    rated = [j for j in judgments if (j.item_id, j.model) in human]
    if not any(j.usage.calls or j.usage.cost_usd for j in rated):
        return None
    return float(sum(j.usage.cost_usd for j in rated))


def score_row(name: str, cost: float | None, scores: Scores, human: Scores, tasks: dict[str, str],
              settings: BootstrapSettings) -> CorrelationRow:
    """One table row from one set of judge scores."""
    cells, n_items, n_models = correlate_scores(scores, human, tasks, settings)
    return CorrelationRow(name, cost, cells, n_items, n_models)


def _extreme(rows: list[CorrelationRow], name: str, cost: float | None, pick: str) -> CorrelationRow:
    """Per cell, the sample index whose point estimate is lowest ('worst') or highest ('best')."""
    out = CorrelationRow(name, cost, n_items=rows[0].n_items, n_models=rows[0].n_models)
    for key in rows[0].cells:
        candidates = [r.cells[key] for r in rows if key in r.cells and np.isfinite(r.cells[key].value)]
        if candidates:
            chooser = min if pick == "worst" else max
            out.cells[key] = chooser(candidates, key=lambda e: e.value)
    return out


def correlate_method(
    method: str, judgments: list[Judgment], human: Scores, settings: BootstrapSettings | None = None
) -> list[CorrelationRow]:
    """Table 3 rows of one method: one row, or worst / best / SC-mean rows when it sampled n > 1 times."""
    settings = settings or BootstrapSettings()
    tasks = {j.item_id: j.task for j in judgments}
    cost = total_cost(judgments, human)
    n = max((len(j.samples) for j in judgments), default=0)
    if n <= 1:
        return [score_row(method, cost, final_scores(judgments), human, tasks, settings)]
    one = None if cost is None else cost / n
    per_sample = [score_row(method, one, sample_scores(judgments, k), human, tasks, settings) for k in range(n)]
    return [
        _extreme(per_sample, f"{method} - worst", one, "worst"),
        _extreme(per_sample, f"{method} - best", one, "best"),
        score_row(f"{method} + SC (n={n})", cost, mean_sample_scores(judgments), human, tasks, settings),
    ]


def correlate_results(
    results: dict[str, list[Judgment]], human: Scores, settings: BootstrapSettings | None = None
) -> list[CorrelationRow]:
    """All methods' rows, in the order the results were given; a DataError when no judged writing was rated."""
    if not any((j.item_id, j.model) in human for js in results.values() for j in js):
        raise DataError(
            "no judged writing has a human rating: item ids and model names must match between the results and "
            "the ratings (e.g. infer_354 / gpt-4o-2024-11-20)"
        )
    return [row for method, js in results.items() for row in correlate_method(method, js, human, settings)]


def _cell_columns(ci: str) -> list[tuple[str, str, str | None]]:
    parts: list[str | None] = [None, "low", "high"] if ci == "columns" else [None]
    return [(t, m, p) for t in TASKS for m in METRICS for p in parts]


def correlation_table(rows: list[CorrelationRow], level: str, ci: str = "inline", title: str | None = None) -> Table:
    """Table 3 layout for one level; `ci` is 'inline' ('0.93 [0.85, 0.97]'), 'columns' (numeric lo/hi) or 'none'."""
    cols = _cell_columns(ci)
    header = ["Method", "Cost ($)"] + [
        f"{TASK_LABELS[t]} {SYMBOLS[m]}" + ("" if part is None else f" {part}") for t, m, part in cols
    ]
    table = Table(title=f"{title or 'Correlation with human ratings'} ({level} level)", columns=header)
    for row in rows:
        cells: list[object] = [row.method, row.cost_usd]
        for task, metric, part in cols:
            est = row.cells.get((level, task, metric))
            cells.append(_cell(est, part, ci))
        table.add_row(*cells)
    n_items = ", ".join(f"{TASK_LABELS[t]} {rows[0].n_items.get(t, 0)}" for t in TASKS) if rows else ""
    ci_note = "" if ci == "none" else "; 95% bootstrap CIs over items"
    table.notes.append(f"items with human ratings: {n_items}{ci_note}")
    return table


def _cell(est: Estimate | None, part: str | None, ci: str) -> object:
    if est is None:
        return None
    if part is not None:
        return est.low if part == "low" else est.high
    if ci == "inline" and np.isfinite(est.value):
        return f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"
    return est.value
