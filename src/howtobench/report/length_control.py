"""Length-controlled leaderboard cells: each model's score predicted at its item's reference length.

`stats.length_fit` holds the model (y = α_model + δ_item + β·ln(writing/reference chars)); this module feeds it
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
from dataclasses import dataclass, field, replace

import numpy as np

from howtobench.data.models import TASKS, Item, Writing
from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.report.length_anchor import PairSlope, pair_features
from howtobench.report.length_per_model import (
    MODES,
    ModelSlope,
    ModelSlopes,
    PooledLine,
    anchored_line,
    by_column,
    model_slopes,
    observational_line,
)
from howtobench.stats import FloatArray, rng_for
from howtobench.stats.length_fit import (
    FitQuality,
    FitResult,
    Observations,
    Replicates,
    bootstrap,
    fit,
    identified,
    interval,
)

LENGTH_CONTROLLED = "length_controlled"
ITEM_ADJUSTED = "item_adjusted"
ALL = "all"


def adjusted_metric(metric: str) -> str:
    """The cell metric of an item-adjusted score (β = 0: item effects only): "item_adjusted[:<node>]"."""
    return ITEM_ADJUSTED if metric == "score" else f"{ITEM_ADJUSTED}:{metric}"


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
    outside: float = 0.0
    """Share of those writings whose length lies outside the support (the range the other models cover)."""

    @property
    def out_of_support(self) -> bool:
        """More than `SUPPORT_SHARE` of the writings outside the support: the value extrapolates (marked †)."""
        return bool(self.outside > SUPPORT_SHARE)


@dataclass(frozen=True)
class FitSummary:
    """One task's fit for one metric, as printed and stored: the length coefficients (below the reference, and
    above it when the fit bends there), the support the length term is clipped to, and the fit's quality."""

    metric: str
    task: str
    beta: float
    beta_ci: tuple[float, float] | None
    quality: FitQuality
    n_models: int
    beta_above: float | None = None
    beta_above_ci: tuple[float, float] | None = None
    support: tuple[float, float] = (-math.inf, math.inf)
    """The central 95% of the fit's log length ratios (each model's own writings are clipped to the central 95%
    of the other models')."""
    score_range: tuple[float, float] = (-math.inf, math.inf)
    """The scores observed in the fit: no controlled value or bound leaves it."""
    outside: dict[str, float] = field(default_factory=dict)
    """Per column, the share of its writings outside the support."""
    anchor: PairSlope | None = None
    """The judge's slopes measured on pad / trim pairs (--length-anchor): when given, the controlled values use
    them, and `beta` / `beta_above` (the association) are the check."""
    per_model: dict[str, ModelSlope] = field(default_factory=dict)
    """With --length-slopes per-model (root score): each column's slopes, shrunk toward the pooled ones
    (report.length_per_model); empty when the slopes are pooled."""
    tau2: float | None = None
    """The between-model variance of the own slopes the shrinkage estimated (per-model only)."""

    @property
    def disagrees(self) -> bool:
        """The anchor's interval and the association's do not overlap (below the reference, or above it)."""
        if self.anchor is None:
            return False
        pairs = [(self.anchor.beta_ci, self.beta_ci)]
        if self.anchor.beta_above is not None and self.beta_above is not None:
            pairs.append((self.anchor.beta_above_ci, self.beta_above_ci))
        return any(a is not None and b is not None and (a[1] < b[0] or b[1] < a[0]) for a, b in pairs)


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
    slopes: str = "pooled"
    """--length-slopes: "pooled" (one slope pair per task) or "per-model" (the root's slopes per model, shrunk)."""

    @property
    def warnings(self) -> list[str]:
        out = [f"{col}: {n} scored writings have no positive length or reference length (an empty writing scored "
               "lowest, or an item without a reference): left out of the length-controlled fit"
               for col, n in self.excluded.items() if n]
        flagged = sorted({(row, col) for (metric, row, col), c in self.cells.items()
                          if metric == LENGTH_CONTROLLED and c.out_of_support})
        out += [f"{f.metric} ({f.task}): the observational length slope {f.beta:+.3f} disagrees with the judge's own, "
                f"measured on {f.anchor.n} pad/trim pairs, {f.anchor.beta:+.3f}: it is an association (longer writings "
                "may be better, or worse), not the judge's length bias; the controlled values use the measured one"
                for f in self.fits if f.disagrees and f.anchor is not None]
        out += [f"{col} ({row}): {self.cells[(LENGTH_CONTROLLED, row, col)].outside:.0%} of its writings lie outside "
                "the length range the other models cover: its length-controlled value extrapolates (†) and is not "
                "a measurement" for row, col in flagged]
        return out


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


SUPPORT_SHARE = 0.25
"""A controlled cell with more than this share of its writings outside the support is marked † (extrapolated)."""
CENTRAL = (2.5, 97.5)
"""The support: the central 95% of the log length ratios."""
MIN_SIDE = 10
"""Writings needed on each side of the reference (after clipping) for a separate slope above it."""


@dataclass(frozen=True)
class Features:
    """The length term: `x` as the fit sees it (the log ratios as observed), `corrected` as each model's correction
    sees it (clipped to the central 95% of the *other* models' ratios with three models or more, of all ratios
    with two, widened to take in the reference where the prediction is made), both split at the reference (below
    0, above 0) when both sides have `MIN_SIDE` writings, else one column; and which writings lie outside their
    model's support."""

    x: FloatArray
    corrected: FloatArray
    own: FloatArray
    """Each writing's log ratio clipped to its model's support, before the split."""
    outside: np.ndarray
    support: tuple[float, float]
    bent: bool


def _central(values: FloatArray) -> tuple[float, float]:
    low, high = np.percentile(values, CENTRAL)
    return float(min(low, 0.0)), float(max(high, 0.0))


def features(obs: Observations, bend: bool = True) -> Features:
    """Bounded, bent length features (see `Features`).

    The fit sees the ratios unclipped: winsorising them biased a planted β = 2 to 2.22 (tests/report/
    test_length_control.py's crafted table), since clipped writings keep the score of their true length. The bound
    is on the correction instead: a model is corrected to the reference's length only over the lengths the *other*
    models cover, so it cannot widen the range it is corrected over — a stub writing 5% of the reference gets the
    correction of the shortest lengths anyone else wrote, not an extrapolation of the line — and a model with more
    than `SUPPORT_SHARE` of its writings outside that range is marked (†) as extrapolated."""
    low, high = _central(obs.x)
    lo, hi = np.full(obs.n_models, low), np.full(obs.n_models, high)
    if obs.n_models >= 3:  # with two, "the others" is one model: the pooled range
        for m in range(obs.n_models):
            lo[m], hi[m] = _central(obs.x[obs.model != m])
    fitted = obs.x
    own = np.clip(obs.x, lo[obs.model], hi[obs.model])
    outside = (obs.x < lo[obs.model]) | (obs.x > hi[obs.model])
    bent = bend and int((fitted > 0).sum()) >= MIN_SIDE and int((fitted < 0).sum()) >= MIN_SIDE

    def split(v: FloatArray) -> FloatArray:
        return np.column_stack([np.minimum(v, 0.0), np.maximum(v, 0.0)]) if bent else v

    return Features(split(fitted), split(own), own, outside, (low, high), bent)


def _given_back(obs: Observations, f: Features, betas: FloatArray, weights: FloatArray) -> FloatArray:
    """(replicates × models) change of each model's controlled value under the bound, items weighted as in the
    replicate: per writing, the correction's extra credit beyond its support, β · (fitted − bounded feature) where
    that is negative, taken back (`bounded_credit`); a penalty beyond the support is kept whole."""
    change = np.minimum(f.x.reshape(obs.x.shape[0], -1) @ betas.T - f.corrected.reshape(obs.x.shape[0], -1) @ betas.T,
                        0.0)  # writings × replicates
    onehot = (obs.model[:, None] == np.arange(obs.n_models)[None, :]).astype(float)  # writings × models
    w = weights[:, obs.item]  # replicates × writings
    summed = (w * change.T) @ onehot
    n = w @ onehot
    out: FloatArray = np.divide(summed, n, out=np.zeros_like(summed), where=n > 0)
    return out


def bounded_credit(line: FloatArray, bounded: FloatArray) -> FloatArray:
    """What is taken from each score for its length: the larger of the line's charge and the bounded one. A writing
    beyond the support gets no more credit than the support's edge allows (a short stub is not raised along the
    line), and no less charge than the line says (padding beyond the others' lengths is not excused)."""
    result: FloatArray = np.maximum(line, bounded)
    return result


@dataclass(frozen=True)
class _TaskFit:
    summary: FitSummary
    controlled: FloatArray  # (columns,) NaN for a column without a value
    replicates: FloatArray  # (n_boot, columns)
    adjusted: FloatArray  # (columns,) item-adjusted (β = 0)
    adjusted_replicates: FloatArray  # (n_boot, columns)
    n_items: int
    n_obs: FloatArray  # (columns,)
    n_outside: FloatArray  # (columns,)
    per_model: ModelSlopes | None = None  # the fit's models are `cols`
    cols: np.ndarray | None = None


def _fitted(obs: Observations) -> tuple[Observations, Features] | None:
    """The observations with bounded features: bent at the reference when that is identified, else one slope."""
    for bend in (True, False):
        f = features(obs, bend)
        clipped = replace(obs, x=f.x)
        if identified(clipped):
            return clipped, f
    return None


def _weights(obs: Observations, n_boot: int, rng: np.random.Generator) -> FloatArray:
    """The item weights `length_fit.bootstrap` draws with the same generator state (items with a writing)."""
    present = np.flatnonzero(np.bincount(obs.item, minlength=obs.n_items) > 0)
    draws = present[rng.integers(0, present.size, size=(n_boot, present.size))]
    weights = np.zeros((n_boot, obs.n_items))
    np.add.at(weights, (np.repeat(np.arange(n_boot), present.size), draws.ravel()), 1.0)
    return weights


def _spread(values: FloatArray, cols: np.ndarray, n_cols: int, rows: int | None = None) -> FloatArray:
    out = np.full((n_cols,) if rows is None else (rows, n_cols), np.nan)
    out[..., cols] = values
    return out


def _anchored(obs: Observations, clipped: Observations, f: Features, anchor: PairSlope, n_boot: int,
              rng: np.random.Generator) -> tuple[FloatArray, FloatArray | None]:
    """Controlled values with the judge's measured slopes: each writing's score less what the judge pays for its
    (support-clipped) length, then models and items fitted on that (α + mean δ of the length-free fit)."""
    bent = anchor.beta_above is not None
    charge = bounded_credit(pair_features(obs.x, bent) @ anchor.betas, pair_features(f.own, bent) @ anchor.betas)
    offset = obs.y - charge
    shifted = replace(clipped, y=offset)
    point = fit(shifted).item_adjusted
    reps = bootstrap(shifted, n_boot, rng).item_adjusted if n_boot > 0 else None
    assert point is not None
    return point, reps


def _per_model(obs: Observations, f: Features, point: FitResult, reps: Replicates | None, anchor: PairSlope | None,
               weights: FloatArray | None) -> tuple[FloatArray, FloatArray, ModelSlopes]:
    """Controlled values and replicates with per-model slopes (report.length_per_model) added to the pooled fit's
    slopes, or to the anchor's; the replicates on the pooled bootstrap's item draws (`weights`)."""

    def pooled(betas: FloatArray) -> PooledLine:
        if anchor is not None:
            return anchored_line(obs.x, f.own, anchor, betas.shape[0])
        return observational_line(f.x, f.corrected, betas, f.bent)

    first = np.array([point.betas])
    drawn = None
    if reps is not None and reps.betas is not None and weights is not None:
        drawn = (weights, reps.betas[:, 0], pooled(reps.betas))
    return model_slopes(obs, f.own, f.bent, (first[:, 0], pooled(first)), drawn)


def _fit_task(metric: str, task: str, y: FloatArray, x: FloatArray, seed: int, n_boot: int,
              anchor: PairSlope | None = None, per_model: bool = False) -> _TaskFit | None:
    obs, cols, _ = _observations(y, x)
    if obs.n_models < 2 or obs.x.size == 0 or not identified(obs):
        return None  # one model, or lengths that do not vary within items apart from the models: no β to fit
    found = _fitted(obs)
    if found is None:
        return None
    clipped, f = found
    point = fit(clipped)
    label = f"length|{metric}|{task}"
    reps = bootstrap(clipped, n_boot, rng_for(seed, label)) if n_boot > 0 else None
    n_cols, k = y.shape[0], max(n_boot, 0)
    lo, hi = float(obs.y.min()), float(obs.y.max())
    back = _given_back(obs, f, np.array([point.betas]), np.ones((1, obs.n_items)))[0]
    controlled = np.clip(_spread(point.controlled + back, cols, n_cols), lo, hi)
    adjusted = np.clip(_spread(point.item_adjusted, cols, n_cols), lo, hi)  # type: ignore[arg-type]
    if reps is not None and reps.betas is not None:
        back_reps = _given_back(obs, f, reps.betas, _weights(obs, n_boot, rng_for(seed, label)))
        replicates = np.clip(_spread(reps.controlled + back_reps, cols, n_cols, k), lo, hi)
    else:
        replicates = np.full((k, n_cols), np.nan)
    if anchor is not None:
        anchored, anchored_reps = _anchored(obs, clipped, f, anchor, n_boot, rng_for(seed, label + "|anchor"))
        controlled = np.clip(_spread(anchored, cols, n_cols), lo, hi)
        replicates = (np.clip(_spread(anchored_reps, cols, n_cols, k), lo, hi) if anchored_reps is not None
                      else np.full((k, n_cols), np.nan))
    slopes = None
    if per_model:
        weights = _weights(obs, n_boot, rng_for(seed, label)) if reps is not None else None
        point_pm, reps_pm, slopes = _per_model(obs, f, point, reps, anchor, weights)
        controlled = np.clip(_spread(point_pm, cols, n_cols), lo, hi)
        replicates = (np.clip(_spread(reps_pm, cols, n_cols, k), lo, hi) if reps is not None
                      else np.full((k, n_cols), np.nan))
    adjusted_reps = (np.clip(_spread(reps.item_adjusted, cols, n_cols, k), lo, hi)  # type: ignore[arg-type]
                     if reps else np.full((k, n_cols), np.nan))
    n_obs = _spread(np.bincount(obs.model, minlength=obs.n_models).astype(float), cols, n_cols)
    outside = np.bincount(obs.model, weights=f.outside.astype(float), minlength=obs.n_models).astype(np.float64)
    n_outside = _spread(outside, cols, n_cols)
    n_obs, n_outside = np.nan_to_num(n_obs), np.nan_to_num(n_outside)
    betas = reps.betas if reps is not None and reps.betas is not None else None
    summary = FitSummary(
        metric=metric, task=task, beta=point.betas[0], beta_ci=interval(betas[:, 0]) if betas is not None else None,
        quality=point.quality, n_models=obs.n_models, beta_above=point.betas[1] if f.bent else None,
        beta_above_ci=interval(betas[:, 1]) if f.bent and betas is not None else None, support=f.support,
        score_range=(lo, hi), anchor=anchor)
    return _TaskFit(summary, controlled, replicates, adjusted, adjusted_reps, point.quality.n_items, n_obs, n_outside,
                    slopes, cols)


def _cell(value: float, replicates: FloatArray, n: float, outside: float = 0.0) -> ControlledCell:
    share = float(outside / n) if n else 0.0
    if not math.isfinite(value):
        return ControlledCell(None, None, None, int(n), share)
    ci = interval(replicates) if replicates.size else None
    return ControlledCell(value, ci[0] if ci else None, ci[1] if ci else None, int(n), share)


def _all_row(fits: Sequence[_TaskFit], adjusted: bool = False) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Item-weighted mean over the tasks where a column has a value, point and replicate by replicate; a replicate
    is void for a column when a task the column has a value in gave it none there (a model absent from a draw)."""
    weights = np.array([f.n_items for f in fits], dtype=float)[:, None]
    values = np.stack([f.adjusted if adjusted else f.controlled for f in fits])  # tasks × columns
    has = np.isfinite(values)
    total = np.maximum((weights * has).sum(axis=0), 1.0)
    point = np.where(has.any(axis=0), (np.where(has, values, 0) * weights).sum(axis=0) / total, np.nan)
    reps = np.stack([f.adjusted_replicates if adjusted else f.replicates for f in fits])  # tasks × n_boot × columns
    summed = (np.where(has[:, None, :], np.nan_to_num(reps), 0) * weights[:, :, None]).sum(axis=0) / total
    void = (np.isnan(reps) & has[:, None, :]).any(axis=0)
    n_obs: FloatArray = np.sum([f.n_obs for f in fits], axis=0)
    return point, np.where(void, np.nan, summed), n_obs


def length_controlled(control: bool, anchored: bool, slopes: str | None) -> bool:
    """Whether the length-controlled tables are asked for: --length-control, a length anchor, or --length-slopes
    per-model (each implies them), the one rule for `leaderboard`, `report` and `run`."""
    return control or anchored or slopes == "per-model"


def length_control(values: Mapping[str, FloatArray], x: FloatArray, tasks: np.ndarray, columns: Sequence[str],
                   *, seed: int, n_boot: int, anchor: PairSlope | None = None, slopes: str = "pooled") -> LengthControl:
    """Item-adjusted and length-controlled cells for every metric in `values` (metric → columns × items, NaN = no
    score), task rows and All; `tasks` gives each item's task, `x` each writing's log length ratio; `anchor` the
    judge's slopes measured on pairs (used for the controlled values instead of the association); `slopes`
    "per-model" gives the root score's fits a slope per model shrunk toward the pooled one (report.length_per_model;
    nodes keep the pooled slopes)."""
    if slopes not in MODES:
        raise ValueError(f"length slopes must be one of {', '.join(MODES)}, not {slopes!r}")
    cells: dict[tuple[str, str, str], ControlledCell] = {}
    summaries: list[FitSummary] = []
    metrics: list[str] = []
    for metric, y in values.items():
        fits = []
        for task in [t for t in TASKS if (tasks == t).any()]:
            mask = tasks == task
            root = metric == "score"
            task_fit = _fit_task(metric, task, y[:, mask], x[:, mask], seed, n_boot, anchor if root else None,
                                 per_model=root and slopes == "per-model")
            if task_fit is None:
                continue
            fits.append(task_fit)
            shares = {col: float(task_fit.n_outside[c] / task_fit.n_obs[c]) for c, col in enumerate(columns)
                      if task_fit.n_obs[c]}
            summary = replace(task_fit.summary, outside=shares)
            if task_fit.per_model is not None and task_fit.cols is not None:
                summary = replace(summary, per_model=by_column(task_fit.per_model, [columns[c] for c in task_fit.cols]),
                                  tau2=task_fit.per_model.tau2)
            summaries.append(summary)
            for c, col in enumerate(columns):
                if task_fit.n_obs[c] or math.isfinite(task_fit.controlled[c]):
                    cells[(controlled_metric(metric), task, col)] = _cell(
                        task_fit.controlled[c], task_fit.replicates[:, c], task_fit.n_obs[c], task_fit.n_outside[c])
                    cells[(adjusted_metric(metric), task, col)] = _cell(
                        task_fit.adjusted[c], task_fit.adjusted_replicates[:, c], task_fit.n_obs[c])
        if not fits:
            continue
        metrics += [adjusted_metric(metric), controlled_metric(metric)]
        n_outside: FloatArray = np.sum([f.n_outside for f in fits], axis=0)
        for adjusted, name in ((False, controlled_metric(metric)), (True, adjusted_metric(metric))):
            point, reps, n_obs = _all_row(fits, adjusted)
            for c, col in enumerate(columns):
                if n_obs[c]:
                    cells[(name, ALL, col)] = _cell(point[c], reps[:, c], n_obs[c], 0.0 if adjusted else n_outside[c])
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
    return LengthControl(cells, tuple(summaries), tuple(metrics), excluded, points, slopes)


def sources_from(items: Sequence[Item] | None, writings: Sequence[Writing]) -> LengthSources:
    """Lengths for older judgments: each writing's characters, each item's reference characters."""
    return LengthSources(
        writing_chars={(w.model, w.item_id): len(w.output) for w in writings},
        reference_chars={i.id: len(i.reference) for i in items or ()},
    )


def needs_sources(judgments: Sequence[Judgment]) -> bool:
    """Whether any scored judgment predates the recorded lengths."""
    return any(j.score is not None and (j.writing_chars is None or j.reference_chars is None) for j in judgments)
