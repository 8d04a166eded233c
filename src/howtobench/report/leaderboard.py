"""Leaderboards from judgment files of any method: the shape of the paper's Table 4, with honesty attached.

Rows are the tasks (Completion / Guide / Open), the genres, and All; columns are the judged models ordered by
their All score. Each cell is the mean root score (`Judgment.score`) over the items of that row, with a
seeded bootstrap 95% interval (items resampled). On request the same table is built for every node of the
tree (`Judgment.nodes`: content / format / impression).

What counts, and why:
- a judgment whose status is `failed` (or that carries no score) is a failure, never a number: it is left
  out of the means and counted, and a leaderboard that contains failures says so in its warnings;
- an empty writing (status `empty`) is left out of the means and counted, as the authors' pipeline skips empty
  writings (`empty="exclude"`, the default; the paper's Table 4 is computed that way). `empty="lowest"` instead
  keeps the lowest score the judge recorded for it, so a model that returns nothing is punished; either way the
  count of empty writings is shown and the convention is named in the warnings and the signature;
- a writing the server cut short (max_tokens or a content filter: `Judgment.writing_truncated`) keeps the score
  the judge gave the text as written, and is counted per model as truncated;
- a judgment whose edge weights J_W did not give validly (moved to the nearest valid plan, uniform 1/n, or a sum near 1
  rescaled: `Judgment.weight_repairs`) keeps its score and is counted per model and per cell, next to failures;
- the same (method, item, model) twice keeps the last line (a judge file that was appended to) and warns;
- judgments of two methods are refused in one line: a 1-10 ToW root and a 0-1 ROUGE-L are not one scale, so
  ranking, pairing or testing them against each other would print numbers that mean nothing.

A cell of one item has no interval (a resample of one value is that value: `[3.38, 3.38]` would read as certainty).

Adjacent columns are compared on their shared items (`howtobench.stats.paired_compare`), and so are the pairs a user
asks for (`compare`, or every column against a `baseline`); each column's headline (`versus`) compares it with the
baseline, else with the column ranked next to it. Columns are ordered by
their All mean (`order="means"`, the paper's Table 4), each over its own scored items; when failures leave two
models on different items, the paired difference on their shared items can have the other sign, and such a
pair is flagged (`PairedResult.against_order`, a warning, a column of the paired table). `order="shared"`
orders instead by the mean over the items every column has a score for, and says how many. The paper's reference
columns, when shown, are placed and labelled by `report.reference`. The report never calls a model: everything
here is a pure function of the judgment records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from howtobench.calibration.route import check_paper_rows
from howtobench.data.genres import GENRES, TABLE4_GENRES
from howtobench.data.models import TASKS, Item
from howtobench.data.paper import ALL_ROW, PaperTable
from howtobench.data.rows import read_model_rows
from howtobench.errors import ConfigError, DataError
from howtobench.guard.guard import guard_counts
from howtobench.judges.base import EmptyConvention, Judgment, check_empty, counted_score
from howtobench.judges.negotiator import REPAIR_KINDS, RepairKind, repair_kinds
from howtobench.report.length_anchor import measured_slope
from howtobench.report.length_control import LengthControl, LengthSources, length_control, log_ratios
from howtobench.report.reference import Source, display_order, paper_use
from howtobench.stats import FloatArray, PairedResult, bootstrap_ci, paired_compare, rng_for
from howtobench.suggest import unknown_name
from howtobench.version import __version__

By = Literal["both", "task", "genre"]
Order = Literal["means", "shared"]
ORDERS: tuple[str, ...] = ("means", "shared")
SCORE = "score"
NODE_ORDER = ("content", "format", "impression")
TASK_LABELS = {"completion": "Completion", "guide": "Guide", "open": "Open"}


@dataclass(frozen=True)
class Row:
    """One leaderboard row: a task, a genre, or All."""

    group: Literal["task", "genre", "all"]
    key: str
    label: str


@dataclass(frozen=True)
class Cell:
    """Mean of one metric for one column over one row's items, with its interval and counts."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_failed: int
    n_weights_repaired: int = 0
    n_empty: int = 0
    """Empty writings among the row's items: left out of `n` and the mean, or in them ("lowest")."""
    out_of_support: bool = False
    """A length-controlled value that extrapolates beyond the lengths the other models wrote (printed with †)."""


@dataclass(frozen=True)
class ModelCounts:
    """How many writings of one column were judged, scored, failed, empty, renormalised, missing, and how many
    judgments rest on repaired weights (any kind, then per kind: a judgment may have several)."""

    column: str
    model: str
    method: str
    judged: int
    scored: int
    failed: int
    empty: int
    renormalized: int
    missing: int | None = None
    truncated: int = 0
    weights_repaired: int = 0
    weights_clipped: int = 0
    weights_uniform: int = 0
    weights_rescaled: int = 0
    guard_flagged: int = 0  # judgments whose writing a guard rule flagged (`--guard`, guard/)
    guard_skipped: int = 0  # of them, skipped without a judge call (counted in `failed` too)

    @property
    def failure_rate(self) -> float:
        return self.failed / self.judged if self.judged else 0.0


@dataclass(frozen=True)
class Leaderboard:
    """Everything every output format prints; built once by `build_leaderboard`."""

    methods: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    metrics: tuple[str, ...]
    cells: dict[tuple[str, str, str], Cell]
    counts: dict[str, ModelCounts]
    paired: tuple[PairedResult, ...]
    seed: int
    n_boot: int
    judge_models: tuple[str, ...] = ()
    paper: PaperTable | None = None
    title: str = "Leaderboard"
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)
    order: Order = "means"
    order_items: int | None = None
    """With order "shared": how many items every column has a score for (the ordering means' items)."""
    order_scores: dict[str, float] = field(default_factory=dict)
    """The value each column is ordered by (its All mean, or its mean over the shared items)."""
    empty: EmptyConvention = "exclude"
    """How empty writings count in the means ("exclude": the authors'; "lowest")."""
    length_control: LengthControl | None = None
    """With --length-control: the fits behind the `length_controlled` cells (report.length_control)."""
    shown: tuple[tuple[Source, str], ...] = ()
    """Every column printed, in order: ours ("ours", column) and the paper's ("paper", model) placed among them."""
    paper_caveat: str | None = None
    """Why the paper's columns are not comparable with ours (None: they are, or none are shown)."""
    paper_hidden: str | None = None
    """Why the paper's columns asked for are not shown (another method's scale in the table)."""
    column_judges: dict[str, str] = field(default_factory=dict)
    """Who scored each column: its judge model(s), or the metric for a method that calls no model."""
    comparisons: tuple[PairedResult, ...] = ()
    """The pairs asked for (`compare`, or every column against `baseline`), first − second on shared items."""
    baseline: str | None = None
    versus: dict[str, PairedResult] = field(default_factory=dict)
    """Each column against the baseline, else against the column ranked next to it (its headline's comparison)."""
    column_digits: dict[str, int] = field(default_factory=dict)
    """Decimals each column is printed with: enough to tell its models apart (`display_digits`)."""
    under_test: tuple[str, ...] = ()
    """The columns of the model(s) under test (a run's writer, its --writings), as opposed to the shipped models
    judged beside them: their closing lines come last and the report marks them (report.headline)."""
    calibration: str | None = None
    """With --calibration: its label ("calibrated to JUDGE on N anchors"), which titles the `calibrated` tables."""
    calibration_id: str | None = None
    """With --calibration: its kind and content digest, for the signature (`Calibration.digest`)."""

    def digits(self, column: str) -> int:
        """Decimals of a column's numbers (a paper reference column: 2, as published)."""
        return self.column_digits.get(column, 2)

    @property
    def empty_label(self) -> str:
        """What happened to the empty writings, in words every view prints (with their number)."""
        n = sum(c.empty for c in self.counts.values())
        if self.empty == "exclude":
            return (f"{n} empty writings left out of the means (--empty exclude, the authors' convention: their "
                    "pipeline judges no empty writing; --empty lowest scores them)")
        return f"{n} empty writings scored at the judge's lowest scores (--empty lowest)"

    @property
    def order_label(self) -> str:
        """How the columns are ordered, in words every view prints."""
        if self.order == "shared":
            label = f"mean over the {self.order_items} items every model has a score for"
            return label + ("; the paper's reference columns after them" if self.paper else "")
        label = "All mean over each model's own scored items"
        return label + ("; the paper's reference columns among them by their published All" if self.paper else "")

    def rank(self, column: str) -> int:
        """1-based place of one of our columns among every column printed (the paper's included)."""
        return self.shown.index(("ours", column)) + 1

    def cell(self, metric: str, row: str, column: str) -> Cell | None:
        return self.cells.get((metric, row, column))

    @property
    def signature(self) -> str:
        """A reproducibility line in the manner of sacrebleu: what produced these numbers."""
        judges = ",".join(self.judge_models) or "unknown"
        return (
            f"howtobench:{__version__}|method:{'+'.join(self.methods)}|judge:{judges}"
            f"|ci:percentile-bootstrap-items-{self.n_boot}|seed:{self.seed}|paired:wilcoxon|empty:{self.empty}"
            f"|order:{self.order if self.order_items is None else f'shared-{self.order_items}'}"
            + ("|length-control:ols-model+item-logratio" if self.length_control else "")
            + ("+per-model-slopes" if self.length_control and self.length_control.slopes == "per-model" else "")
            + (f"|calibration:{self.calibration_id}" if self.calibration_id else "")
        )


def load_judgments(paths: Iterable[Path]) -> list[Judgment]:
    """Read Judgment JSONL files; a bad line raises RowError naming the file and line (blank lines skip)."""
    return [j for path in paths for j in read_model_rows(path, Judgment, "judgment")]


@dataclass
class _Matrix:
    """Per-item arrays computed once: values[metric] is (columns × items), NaN where there is no score."""

    columns: list[str]
    items: list[tuple[str, str]]
    tasks: np.ndarray
    genres: np.ndarray
    values: dict[str, FloatArray]
    failed: np.ndarray
    repaired: np.ndarray
    empty: np.ndarray


def _column_name(j: Judgment, multi_method: bool) -> str:
    return f"{j.model} [{j.method}]" if multi_method else j.model


def _dedupe(judgments: Sequence[Judgment], multi: bool) -> tuple[dict[tuple[str, str, str], Judgment], int]:
    latest: dict[tuple[str, str, str], Judgment] = {}
    for j in judgments:
        latest[(_column_name(j, multi), j.task, j.item_id)] = j
    return latest, len(judgments) - len(latest)


def _is_failed(j: Judgment) -> bool:
    return j.status == "failed" or (j.score is None and j.status != "empty")


def _metric_value(j: Judgment, metric: str, empty: EmptyConvention) -> float | None:
    return counted_score(j, empty, None if metric == SCORE else metric)


def _node_metrics(judgments: Iterable[Judgment]) -> tuple[str, ...]:
    names = {name for j in judgments for name, v in j.nodes.items() if v is not None}
    return tuple(n for n in NODE_ORDER if n in names) + tuple(sorted(names - set(NODE_ORDER)))


def _matrix(latest: dict[tuple[str, str, str], Judgment], metrics: Sequence[str], genre_of: dict[str, str],
            empty: EmptyConvention) -> _Matrix:
    columns = sorted({c for c, _, _ in latest})
    items = sorted({(t, i) for _, t, i in latest})
    col_ix = {c: k for k, c in enumerate(columns)}
    item_ix = {it: k for k, it in enumerate(items)}
    values = {m: np.full((len(columns), len(items)), np.nan) for m in metrics}
    failed = np.zeros((len(columns), len(items)), dtype=bool)
    repaired = np.zeros((len(columns), len(items)), dtype=bool)
    empty_writing = np.zeros((len(columns), len(items)), dtype=bool)
    item_genre: dict[tuple[str, str], str] = {}
    for (col, task, item_id), j in latest.items():
        c, k = col_ix[col], item_ix[(task, item_id)]
        item_genre.setdefault((task, item_id), genre_of.get(item_id, j.genre))
        failed[c, k] = _is_failed(j)
        repaired[c, k] = bool(repair_kinds(j.weight_repairs))
        empty_writing[c, k] = j.status == "empty"
        for m in metrics:
            v = _metric_value(j, m, empty)
            if v is not None:
                values[m][c, k] = v
    return _Matrix(
        columns=columns,
        items=items,
        tasks=np.array([t for t, _ in items], dtype=object),
        genres=np.array([item_genre[it] for it in items], dtype=object),
        values=values,
        failed=failed,
        repaired=repaired,
        empty=empty_writing,
    )


def _rows(mx: _Matrix, by: By) -> list[Row]:
    rows: list[Row] = []
    if by in ("both", "task"):
        present = set(mx.tasks.tolist())
        rows += [Row("task", t, TASK_LABELS[t]) for t in TASKS if t in present]
    if by in ("both", "genre"):
        present = set(mx.genres.tolist())
        ordered = [g for g in TABLE4_GENRES if g in present] + sorted(present - set(TABLE4_GENRES))
        rows += [Row("genre", g, GENRES[g].en if g in GENRES else g) for g in ordered]
    rows.append(Row("all", ALL_ROW, "All"))
    return rows


def _row_mask(mx: _Matrix, row: Row) -> np.ndarray:
    if row.group == "task":
        return np.asarray(mx.tasks == row.key)
    if row.group == "genre":
        return np.asarray(mx.genres == row.key)
    return np.ones(len(mx.items), dtype=bool)


def _cells(mx: _Matrix, rows: Sequence[Row], seed: int, n_boot: int) -> dict[tuple[str, str, str], Cell]:
    cells: dict[tuple[str, str, str], Cell] = {}
    for row in rows:
        mask = _row_mask(mx, row)
        for metric, matrix in mx.values.items():
            for c, col in enumerate(mx.columns):
                raw = matrix[c, mask]
                vals = raw[~np.isnan(raw)]
                n_failed = int(mx.failed[c, mask].sum())
                if vals.size == 0 and (n_failed == 0 or metric != SCORE):
                    continue  # a node the tree does not have here (Completion has no Format) is no cell
                # one item has no interval: the resampled mean of one value is that value
                ci = bootstrap_ci(vals, n_boot=n_boot, rng=rng_for(seed, f"{metric}|{row.key}|{col}")) \
                    if vals.size > 1 else None
                cells[(metric, row.key, col)] = Cell(
                    mean=float(vals.mean()) if vals.size else None,
                    ci_low=ci[0] if ci else None,
                    ci_high=ci[1] if ci else None,
                    n=int(vals.size),
                    n_failed=n_failed,
                    n_weights_repaired=int(mx.repaired[c, mask].sum()),
                    n_empty=int(mx.empty[c, mask].sum()),
                )
    return cells


def _ranked(columns: Sequence[str], value: dict[str, float]) -> list[str]:
    """Highest value first; columns without a value last; ties by name, for a stable order."""

    def key(col: str) -> tuple[int, float, str]:
        return (1, 0.0, col) if col not in value else (0, -value[col], col)

    return sorted(columns, key=key)


def _all_means(columns: Sequence[str], cells: dict[tuple[str, str, str], Cell]) -> dict[str, float]:
    found = {col: cells.get((SCORE, ALL_ROW, col)) for col in columns}
    return {col: c.mean for col, c in found.items() if c is not None and c.mean is not None}


def _shared_means(mx: _Matrix) -> tuple[dict[str, float], int]:
    """Each column's mean root over the items every column has a score for, and how many those are."""
    scores = mx.values[SCORE]
    shared = ~np.isnan(scores).any(axis=0)
    n = int(shared.sum())
    if n == 0:
        raise DataError("no item has a score for every model, so the leaderboard cannot be ordered on shared "
                        "items; use --order means")
    return {col: float(scores[c, shared].mean()) for c, col in enumerate(mx.columns)}, n


def _order_warnings(paired: Sequence[PairedResult], order: Order) -> list[str]:
    basis = "on the shared-items mean" if order == "shared" else "by its mean over its own items"
    return [
        f"{p.first} ranks above {p.second} {basis}, but on the {p.n_shared} items both have a score for "
        f"{p.second} scores higher (paired difference {p.mean_diff:+.4f})"
        + ("; --order shared orders on the items every model has" if order == "means" else "")
        for p in paired
        if p.against_order
    ]


def _pair(mx: _Matrix, first: str, second: str, seed: int, n_boot: int) -> PairedResult:
    """`first` − `second` on the items both have a score for (howtobench.stats.paired_compare).

    One resampling per unordered pair: the generator is keyed by the two names in sorted order and the difference
    computed in that order, then mirrored, so a pair has one interval wherever it is printed (adjacent table,
    --compare, --baseline, the closing lines) and A − B is exactly −(B − A)."""
    ix = {c: k for k, c in enumerate(mx.columns)}
    scores = mx.values[SCORE]
    low, high = sorted((first, second))
    rng = rng_for(seed, f"pair|{low}|{high}")
    result = paired_compare(low, high, scores[ix[low]], scores[ix[high]], n_boot=n_boot, rng=rng)
    if low == first:
        return result
    flip = None if result.mean_diff is None else -result.mean_diff
    return PairedResult(first, second, result.n_shared, flip, None if result.ci_high is None else -result.ci_high,
                        None if result.ci_low is None else -result.ci_low, result.p_wilcoxon)


def _paired(mx: _Matrix, order: Sequence[str], seed: int, n_boot: int) -> tuple[PairedResult, ...]:
    return tuple(_pair(mx, first, second, seed, n_boot) for first, second in zip(order, order[1:], strict=False))


def _known_column(name: str, columns: Sequence[str], flag: str) -> str:
    if name not in columns:
        raise ConfigError(f"{flag}: " + unknown_name("model", name, columns))
    return name


def _asked_pairs(columns: Sequence[str], compare: Sequence[str] | None, baseline: str | None) -> list[tuple[str, str]]:
    """The pairs a user asked for: `compare` (A, B) as given, and every other column against `baseline`."""
    pairs: list[tuple[str, str]] = []
    if compare:
        if len(compare) != 2 or compare[0] == compare[1]:
            raise ConfigError(f"--compare takes two different models, not {len(compare)}: --compare A B")
        pairs.append((_known_column(compare[0], columns, "--compare"), _known_column(compare[1], columns, "--compare")))
    if baseline is not None:
        _known_column(baseline, columns, "--baseline")
        pairs += [(col, baseline) for col in columns if col != baseline and (col, baseline) not in pairs]
    return pairs


def _versus(mx: _Matrix, ranked: Sequence[str], baseline: str | None, seed: int,
            n_boot: int) -> dict[str, PairedResult]:
    """Each column's headline comparison: against the baseline, else the column ranked above it (the first one
    against the second)."""
    out: dict[str, PairedResult] = {}
    for k, col in enumerate(ranked):
        other = baseline if baseline is not None else ranked[k - 1] if k else ranked[1] if len(ranked) > 1 else None
        if other is not None and other != col:
            out[col] = _pair(mx, col, other, seed, n_boot)
    return out


FINE_DIGITS = 4
"""Decimals of a metric on a 0-1 scale (ROUGE-L F1): at 2 decimals ten models printed 0.19, 0.19, 0.19, 0.18."""


def display_digits(cells: dict[tuple[str, str, str], Cell]) -> dict[str, int]:
    """Per column, the decimals that separate models: 4 when every mean lies within [-1, 1] (a 0-1 metric), else 2
    (ToW's 1-10, BLEU's 0-100). Read from the values, so a method added later is printed right without a list."""
    means: dict[str, list[float]] = {}
    for (_, _, col), cell in cells.items():
        if cell.mean is not None:
            means.setdefault(col, []).append(abs(cell.mean))
    return {col: FINE_DIGITS if max(values) <= 1.0 else 2 for col, values in means.items()}


def _column_judges(latest: dict[tuple[str, str, str], Judgment]) -> dict[str, str]:
    found: dict[str, set[str]] = {}
    for (col, _, _), j in latest.items():
        found.setdefault(col, set()).add(j.judge_model or f"metric {j.method}")
    return {col: ", ".join(sorted(names)) for col, names in found.items()}


def _counts(latest: dict[tuple[str, str, str], Judgment], items: Sequence[Item] | None,
            empty: EmptyConvention) -> dict[str, ModelCounts]:
    by_col: dict[str, list[Judgment]] = {}
    keys: dict[str, set[tuple[str, str]]] = {}
    for (col, task, item_id), j in latest.items():
        by_col.setdefault(col, []).append(j)
        keys.setdefault(col, set()).add((task, item_id))
    universe = {(i.task, i.id) for i in items} if items is not None else None
    return {
        col: _with_repairs(js, ModelCounts(
            column=col,
            model=js[0].model,
            method=js[0].method,
            judged=len(js),
            scored=sum(1 for j in js if counted_score(j, empty) is not None),
            failed=sum(1 for j in js if _is_failed(j)),
            empty=sum(1 for j in js if j.status == "empty"),
            renormalized=sum(1 for j in js if j.status == "renormalized"),
            truncated=sum(1 for j in js if j.writing_truncated),
            missing=len(universe - keys[col]) if universe is not None else None,
        ))
        for col, js in by_col.items()
    }


def _with_repairs(judgments: Sequence[Judgment], counts: ModelCounts) -> ModelCounts:
    kinds = [repair_kinds(j.weight_repairs) for j in judgments]
    per_kind: dict[RepairKind, int] = {k: sum(k in found for found in kinds) for k in REPAIR_KINDS}
    flagged, skipped = guard_counts(judgments)
    return replace(counts, weights_repaired=sum(bool(found) for found in kinds), weights_clipped=per_kind["clipped"],
                   weights_uniform=per_kind["uniform"], weights_rescaled=per_kind["rescaled"],
                   guard_flagged=flagged, guard_skipped=skipped)


def _warnings(counts: dict[str, ModelCounts], duplicates: int, empty: EmptyConvention) -> list[str]:
    out: list[str] = []
    for c in counts.values():
        if c.failed:
            out.append(
                f"{c.column}: {c.failed} of {c.judged} judgments failed ({c.failure_rate:.1%}); "
                "its means leave them out, so they rest on fewer items"
            )
        if c.renormalized:
            out.append(
                f"{c.column}: {c.renormalized} roots were renormalised over the leaves that could be scored "
                "(a leaf failed; status 'renormalized')"
            )
        if c.guard_flagged:
            out.append(f"{c.column}: the guard flagged {c.guard_flagged} of {c.judged} writings; {c.guard_skipped} "
                       "of them were skipped without a judge call (counted as failed; docs/guard.md)")
        if c.truncated:
            out.append(f"{c.column}: {c.truncated} writings were cut short by max_tokens or a content filter "
                       "(truncated), judged as written")
        if c.weights_repaired:
            out.append(
                f"{c.column}: the edge weights of {c.weights_repaired} of {c.judged} judgments were repaired after "
                f"J_W gave invalid ones (moved to the nearest valid plan {c.weights_clipped}, uniform 1/n "
                f"{c.weights_uniform}, sum near 1 rescaled {c.weights_rescaled}); see each judgment's weight_repairs"
            )
        if c.empty:
            out.append(f"{c.column}: {c.empty} empty writings, " + (
                "left out of the means (the authors' convention; --empty lowest scores them)" if empty == "exclude"
                else "scored as the judge recorded them (lowest scores; --empty lowest)"))
    out += _missing_warnings(counts)
    if duplicates:
        out.append(f"{duplicates} repeated judgments of the same (method, item, model): the last line was kept")
    return out


def _missing_warnings(counts: dict[str, ModelCounts]) -> list[str]:
    """Benchmark items without a judgment: one line when every model lacks the same number (a subset, or a run
    cut short), else one per model."""
    missing = {c.column: c.missing for c in counts.values() if c.missing}
    if not missing:
        return []
    if len(missing) > 1 and len(set(missing.values())) == 1 and len(missing) == len(counts):
        n = next(iter(missing.values()))
        return [f"every model: {n} benchmark items have no judgment (a subset, or a partial run)"]
    return [f"{col}: {n} benchmark items have no judgment (a subset, or a partial run)" for col, n in missing.items()]


@dataclass(frozen=True)
class LeaderboardOptions:
    """How `build_leaderboard` aggregates: one object instead of fifteen keyword arguments, so a caller names only
    what it changes and a new option is one field here (not a parameter threaded through every caller).

    `items` (the benchmark, optionally filtered) gives each item its genre from the data rather than from the
    judgment record, and lets the counts say how many items were never judged. `order` ranks the columns by
    their All means ("means") or by their means over the items every column has a score for ("shared").
    `empty` says how empty writings count: "exclude" (the authors') or "lowest" (see the module docstring).
    `length_controlled` adds each metric's scores predicted at the reference's length (report.length_control;
    `lengths` supplies them for judgments written before they were recorded); the order stays the raw one.
    `compare` (two columns) and `baseline` (one column, against every other) ask for paired differences on the
    items both have a score for; an unknown name is a ConfigError with did-you-mean.
    """

    by: By = "both"
    nodes: bool = False
    seed: int = 0
    n_boot: int = 1000
    items: Sequence[Item] | None = None
    paper: PaperTable | None = None
    title: str = "Leaderboard"
    notes: Sequence[str] = ()
    order: Order = "means"
    empty: EmptyConvention = "exclude"
    length_controlled: bool = False
    lengths: LengthSources | None = None
    compare: Sequence[str] | None = None
    baseline: str | None = None
    length_anchor: Sequence[Judgment] = ()
    """Judgments of pad / truncate variants (--length-anchor): the judge's own length slope, measured on them, sets
    the length-controlled values (report.length_anchor); without, the observational fit, labelled an association."""
    length_slopes: str = "pooled"
    """--length-slopes: "pooled" (default: one slope pair per task) or "per-model" (the root's slope per model, shrunk
    toward the pooled one; report.length_per_model)."""
    under_test: Sequence[str] = ()
    """The models under test (those not among the columns are ignored: a model whose every writing failed)."""


def build_leaderboard(judgments: Sequence[Judgment], options: LeaderboardOptions | None = None) -> Leaderboard:
    """Aggregate judgments into a leaderboard, as `options` (`LeaderboardOptions`, its defaults when None) say."""
    o = options or LeaderboardOptions()
    check_empty(o.empty)
    if o.order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {o.order!r}")
    if not judgments:
        raise DataError("no judgments to build a leaderboard from")
    methods = tuple(sorted({j.method for j in judgments}))
    if len(methods) > 1:
        raise DataError(f"these judgments are of {len(methods)} methods ({', '.join(methods)}): a leaderboard ranks, "
                        "pairs and tests one method's scores (their scales differ); give each method its own")
    latest, duplicates = _dedupe(judgments, multi=len(methods) > 1)
    metrics = (SCORE, *(_node_metrics(latest.values()) if o.nodes else ()))
    genre_of = {i.id: i.genre for i in o.items} if o.items is not None else {}
    mx = _matrix(latest, metrics, genre_of, o.empty)
    rows = _rows(mx, o.by)
    cells = _cells(mx, rows, o.seed, o.n_boot)
    order_scores, order_items = _shared_means(mx) if o.order == "shared" else (_all_means(mx.columns, cells), None)
    ranked = _ranked(mx.columns, order_scores)
    paired = _paired(mx, ranked, o.seed, o.n_boot)
    check_paper_rows(o.compare, o.baseline, judgments)
    asked = _asked_pairs(ranked, o.compare, o.baseline)
    counts = _counts(latest, o.items, o.empty)
    lc = _length_control(latest, mx, o, methods) if o.length_controlled or o.length_anchor else None
    if lc is not None:
        cells |= _controlled_cells(lc, mx, rows)
    judge_models = tuple(sorted({j.judge_model for j in latest.values() if j.judge_model}))
    use = paper_use(o.paper, methods, {j.judge_model for j in latest.values()},
                    {t: int((mx.tasks == t).sum()) for t in set(mx.tasks.tolist())})
    board = Leaderboard(
        methods=methods,
        columns=tuple(ranked),
        rows=tuple(rows),
        metrics=metrics + (lc.metrics if lc else ()),
        cells=cells,
        counts={c: counts[c] for c in ranked},
        paired=paired,
        seed=o.seed,
        n_boot=o.n_boot,
        judge_models=judge_models,
        paper=use.paper,
        title=o.title,
        notes=tuple(o.notes),
        warnings=tuple(_warnings(counts, duplicates, o.empty) + _order_warnings(paired, o.order)
                       + (lc.warnings if lc else [])),
        order=o.order,
        order_items=order_items,
        order_scores=order_scores,
        empty=o.empty,
        length_control=lc,
        shown=display_order(ranked, order_scores, use.paper, interleave=o.order == "means"),
        paper_caveat=use.caveat,
        paper_hidden=use.hidden,
        column_judges=_column_judges(latest),
        comparisons=tuple(_pair(mx, a, b, o.seed, o.n_boot) for a, b in asked),
        baseline=o.baseline,
        versus=_versus(mx, ranked, o.baseline, o.seed, o.n_boot),
        column_digits=display_digits(cells),
        under_test=tuple(c for c in ranked if counts[c].model in set(o.under_test)),
    )
    return board


def _length_control(latest: dict[tuple[str, str, str], Judgment], mx: _Matrix, o: LeaderboardOptions,
                    methods: Sequence[str]) -> LengthControl:
    x = log_ratios(latest, mx.columns, mx.items, o.lengths or LengthSources())
    anchor = None
    if o.length_anchor:
        other = sorted({j.method for j in o.length_anchor} - set(methods))
        if other:
            raise DataError(f"--length-anchor: the anchor judgments are of {', '.join(other)}, the leaderboard of "
                            f"{', '.join(methods)}: a judge's length slope is its own")
        anchor = measured_slope(latest.values(), o.length_anchor, empty=o.empty, seed=o.seed, n_boot=o.n_boot)
    return length_control(mx.values, x, mx.tasks, mx.columns, seed=o.seed, n_boot=o.n_boot, anchor=anchor,
                          slopes=o.length_slopes)


def _controlled_cells(lc: LengthControl, mx: _Matrix, rows: Sequence[Row]) -> dict[tuple[str, str, str], Cell]:
    """The controlled values as leaderboard cells, with the row's failure and repair counts of the raw cells."""
    masks = {row.key: _row_mask(mx, row) for row in rows}
    col_ix = {c: k for k, c in enumerate(mx.columns)}
    out = {}
    for (metric, row, col), c in lc.cells.items():
        if row not in masks:
            continue  # --by genre: no task rows to put the task fits in
        mask = masks[row]
        out[(metric, row, col)] = Cell(mean=c.mean, ci_low=c.ci_low, ci_high=c.ci_high, n=c.n,
                                       n_failed=int(mx.failed[col_ix[col], mask].sum()),
                                       n_weights_repaired=int(mx.repaired[col_ix[col], mask].sum()),
                                       n_empty=int(mx.empty[col_ix[col], mask].sum()),
                                       out_of_support=c.out_of_support)
    return out
