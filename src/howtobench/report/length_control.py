"""Length-controlled leaderboard cells: each model's score predicted at its item's reference length.

`report.length_fit` holds the model (y = α_model + δ_item + β·ln(writing/reference chars)); this module feeds it
the leaderboard's per-item matrices, one fit per task and metric, and turns the fits into cells:

- a task row's controlled cell is α_m + mean δ over the task's items, with a 95% percentile interval from
  bootstrapping items (seeded like every leaderboard interval: `rng_for(seed, label)`);
- the All row is the item-weighted mean of a model's task values (as the raw All row weights every item
  alike), its interval from the same replicates combined task by task (a bootstrap stratified by task);
- genre rows get no controlled cell: the fits are per task, and a genre's few items would carry the whole
  length coefficient of their task.

A writing enters a fit when it has a score and both lengths are positive: an empty writing scored lowest
(`--empty lowest`) or an item without a reference has no log ratio, is left out of the fit and counted in a
warning. Lengths come from the judgment (`writing_chars`, `reference_chars`, recorded since this version), else
from the writings and the benchmark the caller passes; a scored judgment with neither is an error, never a
silent drop. docs/length-control.md is the reviewer's page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from howtobench.data.models import TASKS, Item, Writing
from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.report.length_fit import FitQuality, Observations, bootstrap, fit, identified, interval
from howtobench.stats import FloatArray, rng_for

LENGTH_CONTROLLED = "length_controlled"
ALL = "all"


def controlled_metric(metric: str) -> str:
    """The cell metric of a controlled score: "length_controlled" for the root, "length_controlled:<node>"."""
    return LENGTH_CONTROLLED if metric == "score" else f"{LENGTH_CONTROLLED}:{metric}"


@dataclass(frozen=True)
class LengthSources:
    """Lengths for judgments written before they were recorded: the writing's characters by (model, item id)
    and the reference's characters by item id (from `--writings` / the release and `--data`)."""

    writing_chars: Mapping[tuple[str, str], int] = field(default_factory=dict)
    reference_chars: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ControlledCell:
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Writings of this column in the fit(s) behind the value."""


@dataclass(frozen=True)
class FitSummary:
    """One task's fit for one metric, as printed and stored: the length coefficient and the fit's quality."""

    metric: str
    task: str
    beta: float
    beta_ci: tuple[float, float] | None
    quality: FitQuality
    n_models: int


@dataclass(frozen=True)
class LengthControl:
    """Everything `--length-control` adds to a leaderboard."""

    cells: dict[tuple[str, str, str], ControlledCell]
    fits: tuple[FitSummary, ...]
    metrics: tuple[str, ...]
    excluded: dict[str, int]
    """Scored writings per column left out of the fits for want of a positive length (empty, no reference)."""
    points: dict[tuple[str, str], tuple[FloatArray, FloatArray]]
    """Root score against log length ratio per (task, column): the report's plot."""

    @property
    def warnings(self) -> list[str]:
        return [f"{col}: {n} scored writings have no positive length or reference length (an empty writing scored "
                "lowest, or an item without a reference): left out of the length-controlled fit"
                for col, n in self.excluded.items() if n]


def _chars(j: Judgment, sources: LengthSources) -> tuple[int | None, int | None]:
    w = j.writing_chars if j.writing_chars is not None else sources.writing_chars.get((j.model, j.item_id))
    r = j.reference_chars if j.reference_chars is not None else sources.reference_chars.get(j.item_id)
    return w, r


def log_ratios(latest: Mapping[tuple[str, str, str], Judgment], columns: Sequence[str],
               items: Sequence[tuple[str, str]], sources: LengthSources) -> FloatArray:
    """ln(writing chars / reference chars) as a (columns × items) matrix; NaN where a length is zero or no
    judgment. A scored judgment whose lengths are unknown raises: its file predates the lengths and the caller
    passed neither the writings nor the benchmark."""
    col_ix = {c: k for k, c in enumerate(columns)}
    item_ix = {it: k for k, it in enumerate(items)}
    x = np.full((len(columns), len(items)), np.nan)
    unknown: list[Judgment] = []
    for (col, task, item_id), j in latest.items():
        w, r = _chars(j, sources)
        if w is None or r is None:
            if j.score is not None:
                unknown.append(j)
            continue
        if w > 0 and r > 0:
            x[col_ix[col], item_ix[(task, item_id)]] = math.log(w / r)
    if unknown:
        first = unknown[0]
        raise DataError(
            f"{len(unknown)} scored judgments record no writing or reference length (e.g. {first.model} on "
            f"{first.item_id}): judgments written before lengths were recorded need --data (the references) "
            "and the writings (--writings, or the release's under --data)")
    return x


def _observations(y: FloatArray, x: FloatArray) -> tuple[Observations, np.ndarray, np.ndarray]:
    """The fit's rows from (columns × items) matrices, and which columns / items take part."""
    ok = np.isfinite(y) & np.isfinite(x)
    cols = np.flatnonzero(ok.any(axis=1))
    items = np.flatnonzero(ok.any(axis=0))
    sub = ok[np.ix_(cols, items)]
    m, i = np.nonzero(sub)
    obs = Observations(model=m, item=i, x=x[np.ix_(cols, items)][sub], y=y[np.ix_(cols, items)][sub],
                       n_models=cols.size, n_items=items.size)
    return obs, cols, items


@dataclass(frozen=True)
class _TaskFit:
    summary: FitSummary
    controlled: FloatArray  # (columns,) NaN for a column without a value
    replicates: FloatArray  # (n_boot, columns)
    n_items: int
    n_obs: FloatArray  # (columns,)


def _fit_task(metric: str, task: str, y: FloatArray, x: FloatArray, seed: int, n_boot: int) -> _TaskFit | None:
    obs, cols, _ = _observations(y, x)
    if obs.n_models < 2 or obs.x.size == 0 or not identified(obs):
        return None  # one model, or lengths that do not vary within items apart from the models: no β to fit
    point = fit(obs)
    reps = bootstrap(obs, n_boot, rng_for(seed, f"length|{metric}|{task}")) if n_boot > 0 else None
    n_cols = y.shape[0]
    controlled = np.full(n_cols, np.nan)
    controlled[cols] = point.controlled
    replicates = np.full((max(n_boot, 0), n_cols), np.nan)
    if reps is not None:
        replicates[:, cols] = reps.controlled
    n_obs = np.zeros(n_cols)
    n_obs[cols] = np.bincount(obs.model, minlength=obs.n_models)
    summary = FitSummary(metric=metric, task=task, beta=point.beta,
                         beta_ci=interval(reps.beta) if reps is not None else None, quality=point.quality,
                         n_models=obs.n_models)
    return _TaskFit(summary, controlled, replicates, point.quality.n_items, n_obs)


def _cell(value: float, replicates: FloatArray, n: float) -> ControlledCell:
    if not math.isfinite(value):
        return ControlledCell(None, None, None, int(n))
    ci = interval(replicates) if replicates.size else None
    return ControlledCell(value, ci[0] if ci else None, ci[1] if ci else None, int(n))


def _all_row(fits: Sequence[_TaskFit]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Item-weighted mean over the tasks where a column has a value, point and replicate by replicate; a replicate
    is void for a column when a task the column has a value in gave it none there (a model absent from a draw)."""
    weights = np.array([f.n_items for f in fits], dtype=float)[:, None]
    values = np.stack([f.controlled for f in fits])  # tasks × columns
    has = np.isfinite(values)
    total = np.maximum((weights * has).sum(axis=0), 1.0)
    point = np.where(has.any(axis=0), (np.where(has, values, 0) * weights).sum(axis=0) / total, np.nan)
    reps = np.stack([f.replicates for f in fits])  # tasks × n_boot × columns
    summed = (np.where(has[:, None, :], np.nan_to_num(reps), 0) * weights[:, :, None]).sum(axis=0) / total
    void = (np.isnan(reps) & has[:, None, :]).any(axis=0)
    n_obs: FloatArray = np.sum([f.n_obs for f in fits], axis=0)
    return point, np.where(void, np.nan, summed), n_obs


def length_control(values: Mapping[str, FloatArray], x: FloatArray, tasks: np.ndarray, columns: Sequence[str],
                   *, seed: int, n_boot: int) -> LengthControl:
    """Controlled cells for every metric in `values` (metric → columns × items, NaN = no score), task rows and
    All; `tasks` gives each item's task, `x` each writing's log length ratio."""
    cells: dict[tuple[str, str, str], ControlledCell] = {}
    summaries: list[FitSummary] = []
    metrics: list[str] = []
    for metric, y in values.items():
        fits = []
        for task in [t for t in TASKS if (tasks == t).any()]:
            mask = tasks == task
            task_fit = _fit_task(metric, task, y[:, mask], x[:, mask], seed, n_boot)
            if task_fit is None:
                continue
            fits.append(task_fit)
            summaries.append(task_fit.summary)
            for c, col in enumerate(columns):
                if task_fit.n_obs[c] or math.isfinite(task_fit.controlled[c]):
                    cells[(controlled_metric(metric), task, col)] = _cell(
                        task_fit.controlled[c], task_fit.replicates[:, c], task_fit.n_obs[c])
        if not fits:
            continue
        metrics.append(controlled_metric(metric))
        point, reps, n_obs = _all_row(fits)
        for c, col in enumerate(columns):
            if n_obs[c]:
                cells[(controlled_metric(metric), ALL, col)] = _cell(point[c], reps[:, c], n_obs[c])
    scored = np.isfinite(values["score"]) if "score" in values else np.zeros_like(x, dtype=bool)
    excluded = {col: int((scored[c] & ~np.isfinite(x[c])).sum()) for c, col in enumerate(columns)}
    points = {}
    if "score" in values:
        y = values["score"]
        for task in [t for t in TASKS if (tasks == t).any()]:
            for c, col in enumerate(columns):
                ok = (tasks == task) & np.isfinite(y[c]) & np.isfinite(x[c])
                if ok.any():
                    points[(task, col)] = (x[c, ok], y[c, ok])
    return LengthControl(cells, tuple(summaries), tuple(metrics), excluded, points)


def sources_from(items: Sequence[Item] | None, writings: Sequence[Writing]) -> LengthSources:
    """Lengths for older judgments: each writing's characters, each item's reference characters."""
    return LengthSources(
        writing_chars={(w.model, w.item_id): len(w.output) for w in writings},
        reference_chars={i.id: len(i.reference) for i in items or ()},
    )


def needs_sources(judgments: Sequence[Judgment]) -> bool:
    """Whether any scored judgment predates the recorded lengths."""
    return any(j.score is not None and (j.writing_chars is None or j.reference_chars is None) for j in judgments)
