"""Judge vs human correlations at system and sample level, per task and All (the shape of Table 3).

System level: for each model, the mean judge score and the mean human score over the task's items;
Pearson / Kendall tau-b / Spearman across models. Which items (`ITEM_POLICIES`): by default ("common")
only the items with a judge score and a human rating for every model, so all models are averaged over
the same items (their number is reported); "available" averages each model over its own rated items
(the earlier behaviour). Model means are rounded to `stats.TIE_DECIMALS` decimals before they are
ranked, so exactly tied means (7/2 and 7/2) are ties for Kendall's and Spearman's corrections.

Sample level: for each item, the correlation across the models both rated, then the mean over items; an
item whose judge or human scores do not vary has no correlation and is left out of that mean (as scipy
gives NaN for it).

Intervals come from a seeded bootstrap over items (the unit that was sampled when the meta-evaluation
set was drawn): BCa by default, because resampling items adds noise to the model means, which pulls a
system-level correlation down so that a percentile interval can exclude its own estimate; "percentile"
is an option. Every table names the interval method and the item policy.

Empty writings (status "empty") are left out by default (`empty="exclude"`): the authors' pipeline writes no
judgment for an empty writing, so the correlations behind the paper's Table 3 never saw one. `empty="lowest"`
keeps the lowest score the judge recorded. Either way every row counts the empty writings among the rated ones
(`judges.base.counted_score` applies the convention, as in the leaderboard).

Self-consistency results (judgments with n > 1 samples) give three rows: worst / best and the correlation of
the mean of the samples. Worst / best are whole samples, as Table 3's numbers imply (its Elaborated Rubric worst
row has Comp ρ 0.86 above the best row's 0.84, so the cells were not picked one by one): the sample whose
system-level All correlation (`CorrelationSettings.rank_by`, Spearman by default; Kendall's τ ranks Table 3's
rows the same way) is lowest / highest, every cell and count of the row from that sample, named in the row.
Cost is the sum of
`usage.cost_usd` over the judgments of rated writings; one sample of an n-sample run is billed 1/n of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from howtobench.errors import DataError
from howtobench.judges.base import EmptyConvention, Judgment, check_empty, counted_score, left_out_as_empty
from howtobench.llm.types import Usage
from howtobench.meta.human import WritingKey
from howtobench.stats import (
    INTERVALS,
    METRICS,
    TIE_DECIMALS,
    Estimate,
    interval,
    resample_indices,
    rng_for,
    tie_round,
)

Scores = dict[WritingKey, float]
LEVELS: tuple[str, ...] = ("system", "sample")
TASKS: tuple[str, ...] = ("completion", "guide", "open", "all")
TASK_LABELS: dict[str, str] = {"completion": "Comp", "guide": "Guide", "open": "Open", "all": "All"}
ITEM_POLICIES: dict[str, str] = {
    "common": "items rated for every model",
    "available": "each model's own rated items",
}
"""System-level item policies by name -> how the output describes them."""
CellKey = tuple[str, str, str]
"""(level, task, metric)."""
CountKey = tuple[str, str]
"""(level, task)."""


@dataclass(frozen=True)
class CorrelationSettings:
    """How correlations and their intervals are computed; every table built from them names these choices."""

    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95
    interval: str = "bca"
    items: str = "common"
    tie_decimals: int = TIE_DECIMALS
    empty: EmptyConvention = "exclude"
    rank_by: str = "spearman"
    """The statistic (system level, All) that ranks self-consistency samples into the worst and the best row."""

    def __post_init__(self) -> None:
        check_empty(self.empty)
        if self.rank_by not in METRICS:
            raise ValueError(f"rank_by must be one of {', '.join(METRICS)}, not {self.rank_by!r}")
        if self.interval not in INTERVALS:
            raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, not {self.interval!r}")
        if self.items not in ITEM_POLICIES:
            raise ValueError(f"items must be one of {', '.join(ITEM_POLICIES)}, not {self.items!r}")

    @property
    def interval_label(self) -> str:
        return f"{INTERVALS[self.interval]} {self.level:.0%}"


@dataclass
class CorrelationRow:
    """One method (or one self-consistency variant) against humans."""

    method: str
    cost_usd: float | None
    cells: dict[CellKey, Estimate] = field(default_factory=dict)
    n_items: dict[CountKey, int] = field(default_factory=dict)
    """Items each (level, task) used: at system level under the item policy, at sample level every rated item."""
    n_models: dict[str, int] = field(default_factory=dict)
    settings: CorrelationSettings = field(default_factory=CorrelationSettings)
    n_empty: int = 0
    """Empty writings among the rated ones: left out (`settings.empty` "exclude") or scored lowest ("lowest")."""
    sample: int | None = None
    """Worst / best rows: the index of the self-consistency sample the whole row comes from."""

    def items_used(self, level: str, task: str) -> int:
        """The items behind (level, task)."""
        return self.n_items.get((level, task), 0)


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


def leave_one_out_means(a: np.ndarray) -> np.ndarray:
    """Row i: the column means of `a` (items x columns, NaN = missing) without item i (the jackknife of a mean)."""
    finite = np.isfinite(a)
    values = np.where(finite, a, 0.0)
    rest = finite.sum(axis=0) - finite
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(rest > 0, (values.sum(axis=0) - values) / np.maximum(rest, 1), np.nan)
    return out


def _undefined() -> dict[str, Estimate]:
    return {name: Estimate(float("nan")) for name in METRICS}


def system_items(judge: np.ndarray, hum: np.ndarray, policy: str) -> np.ndarray:
    """Which items enter the model means: all of them, or ("common") those with both scores for every model."""
    if policy == "common":
        out: np.ndarray = np.isfinite(judge).all(axis=1) & np.isfinite(hum).all(axis=1)
        return out
    return np.ones(judge.shape[0], dtype=bool)


def _system(judge: np.ndarray, hum: np.ndarray, s: CorrelationSettings) -> tuple[dict[str, Estimate], int]:
    """Per-model means over the policy's (resampled) items, correlated across models; also the items used."""
    rows = system_items(judge, hum, s.items)
    judge, hum = judge[rows], hum[rows]
    keep = np.isfinite(_nanmean(judge, 0)) & np.isfinite(_nanmean(hum, 0))
    if keep.sum() < 2:
        return _undefined(), int(rows.sum())
    judge, hum = judge[:, keep], hum[:, keep]
    idx = resample_indices(judge.shape[0], s.n_boot, rng_for(s.seed))

    def means(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return tie_round(a, s.tie_decimals), tie_round(b, s.tie_decimals)

    point = means(_nanmean(judge, 0)[None, :], _nanmean(hum, 0)[None, :])
    boot = means(_nanmean(judge[idx], 1), _nanmean(hum[idx], 1))
    jack = means(leave_one_out_means(judge), leave_one_out_means(hum))
    out = {}
    for name, fn in METRICS.items():
        value = float(fn(*point)[0])
        out[name] = Estimate(value, *interval(s.interval, fn(*boot), value, fn(*jack), s.level))
    return out, int(rows.sum())


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


def _sample(judge: np.ndarray, hum: np.ndarray, s: CorrelationSettings) -> tuple[dict[str, Estimate], int]:
    """Mean over items of the per-item correlation; the bootstrap resamples the per-item values."""
    judge, hum = tie_round(judge, s.tie_decimals), tie_round(hum, s.tie_decimals)
    idx = resample_indices(judge.shape[0], s.n_boot, rng_for(s.seed))
    out = {}
    for name in METRICS:
        c = per_item(judge, hum, name)
        value = float(np.nanmean(c)) if np.isfinite(c).any() else float("nan")
        jack = leave_one_out_means(c[:, None])[:, 0]
        out[name] = Estimate(value, *interval(s.interval, _nanmean(c[idx], 1), value, jack, s.level))
    return out, judge.shape[0]


def correlate_scores(
    scores: Scores, human: Scores, item_tasks: dict[str, str], settings: CorrelationSettings | None = None
) -> tuple[dict[CellKey, Estimate], dict[CountKey, int], dict[str, int]]:
    """Every (level, task, metric) cell of one set of judge scores; items per (level, task); models per task."""
    settings = settings or CorrelationSettings()
    cells: dict[CellKey, Estimate] = {}
    n_items: dict[CountKey, int] = {}
    n_models: dict[str, int] = {}
    rated = {i for (i, m) in scores if (i, m) in human}
    for task in TASKS:
        items = sorted(i for i in rated if task == "all" or item_tasks.get(i) == task)
        if not items:
            continue
        judge, hum, models = _matrices(scores, human, items)
        n_models[task] = len(models)
        for level, fn in (("system", _system), ("sample", _sample)):
            estimates, n_items[(level, task)] = fn(judge, hum, settings)
            for metric, est in estimates.items():
                cells[(level, task, metric)] = est
    return cells, n_items, n_models


def final_scores(judgments: Iterable[Judgment], empty: EmptyConvention = "exclude") -> Scores:
    """Writing -> final score, leaving out judgments without one (failures are not numbers) and, by default, empty
    writings (`counted_score`)."""
    return {(j.item_id, j.model): v for j in judgments if (v := counted_score(j, empty)) is not None}


def empty_count(judgments: Iterable[Judgment], human: Scores) -> int:
    """Empty writings among the rated ones: what the convention leaves out or scores lowest."""
    return sum(1 for j in judgments if j.status == "empty" and (j.item_id, j.model) in human)


def _sample_values(j: Judgment) -> list[float | None]:
    """Each sample's score; an empty writing judged without samples (no call was made) has its recorded score."""
    if j.status == "empty" and not j.samples:
        return [j.score]
    return [s.score for s in j.samples]


def sample_scores(judgments: list[Judgment], index: int, empty: EmptyConvention = "exclude") -> Scores:
    """Writing -> the score of sample `index` (self-consistency), where that sample succeeded."""
    out: Scores = {}
    for j in judgments:
        values = [] if left_out_as_empty(j, empty) else _sample_values(j)
        k = 0 if j.status == "empty" and len(values) == 1 else index  # one recorded score stands for every sample
        if len(values) > k and (value := values[k]) is not None:
            out[(j.item_id, j.model)] = float(value)
    return out


def mean_sample_scores(judgments: list[Judgment], empty: EmptyConvention = "exclude") -> Scores:
    """Writing -> mean of its successful samples' scores."""
    out: Scores = {}
    for j in judgments:
        vals = [v for v in _sample_values(j) if v is not None] if not left_out_as_empty(j, empty) else []
        if vals:
            out[(j.item_id, j.model)] = float(np.mean(vals))
    return out


def cost_usage(judgment: Judgment) -> Usage:
    """What a judgment cost: its own calls, plus the calls it re-uses (average scoring re-aggregates ToW leaves)."""
    reused = judgment.meta.get("reused_usage")
    return judgment.usage + (Usage.model_validate(reused) if isinstance(reused, dict) else Usage())


def total_cost(judgments: list[Judgment], human: Scores) -> float | None:
    """Summed cost of the judgments of rated writings; None for methods that made no model call (and re-use
    none)."""
    rated = [cost_usage(j) for j in judgments if (j.item_id, j.model) in human]
    if not any(u.calls or u.cost_usd for u in rated):
        return None
    return float(sum(u.cost_usd for u in rated))


def score_row(name: str, cost: float | None, scores: Scores, human: Scores, tasks: dict[str, str],
              settings: CorrelationSettings, n_empty: int = 0) -> CorrelationRow:
    """One table row from one set of judge scores (`n_empty`: the rated empty writings, for the count column)."""
    cells, n_items, n_models = correlate_scores(scores, human, tasks, settings)
    return CorrelationRow(name, cost, cells, n_items, n_models, settings, n_empty)


def rank_value(row: CorrelationRow) -> float:
    """What ranks a sample's row: its system-level All `rank_by` correlation, else its sample-level one (NaN when
    neither could be computed)."""
    metric = row.settings.rank_by
    for level in LEVELS:
        est = row.cells.get((level, "all", metric))
        if est is not None and np.isfinite(est.value):
            return float(est.value)
    return float("nan")


def whole_sample(rows: list[CorrelationRow], name: str, pick: str) -> CorrelationRow:
    """The row of the sample ranked lowest ('worst') or highest ('best') by `rank_value`, every cell and count its
    own, renamed "<name> (sample k)"; ties go to the lower sample index, and samples without a ranking value are
    passed over (all without one: sample 0)."""
    ranked = [(value, k) for k, row in enumerate(rows) if np.isfinite(value := rank_value(row))]
    chosen = (min(ranked) if pick == "worst" else min(ranked, key=lambda vk: (-vk[0], vk[1])))[1] if ranked else 0
    row = rows[chosen]
    return CorrelationRow(f"{name} (sample {chosen})", row.cost_usd, row.cells, row.n_items, row.n_models,
                          row.settings, row.n_empty, sample=chosen)


def correlate_method(
    method: str, judgments: list[Judgment], human: Scores, settings: CorrelationSettings | None = None
) -> list[CorrelationRow]:
    """Table 3 rows of one method: one row, or worst / best / SC-mean rows when it sampled n > 1 times."""
    settings = settings or CorrelationSettings()
    tasks = {j.item_id: j.task for j in judgments}
    cost = total_cost(judgments, human)
    n = max((len(j.samples) for j in judgments), default=0)
    empties, empty = empty_count(judgments, human), settings.empty
    if n <= 1:
        return [score_row(method, cost, final_scores(judgments, empty), human, tasks, settings, empties)]
    one = None if cost is None else cost / n
    per_sample = [score_row(method, one, sample_scores(judgments, k, empty), human, tasks, settings, empties)
                  for k in range(n)]
    return [
        whole_sample(per_sample, f"{method} - worst", "worst"),
        whole_sample(per_sample, f"{method} - best", "best"),
        score_row(f"{method} + SC (n={n})", cost, mean_sample_scores(judgments, empty), human, tasks, settings,
                  empties),
    ]


def correlate_results(
    results: dict[str, list[Judgment]], human: Scores, settings: CorrelationSettings | None = None
) -> list[CorrelationRow]:
    """All methods' rows, in the order the results were given; a DataError when no judged writing was rated."""
    if not any((j.item_id, j.model) in human for js in results.values() for j in js):
        raise DataError(
            "no judged writing has a human rating: item ids and model names must match between the results and "
            "the ratings (e.g. infer_354 / gpt-4o-2024-11-20)"
        )
    return [row for method, js in results.items() for row in correlate_method(method, js, human, settings)]
