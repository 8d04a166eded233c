"""Human ratings: import, average per writing, and inter-annotator agreement.

A rating is one rater's score for one writing (item id + model), optionally with per-dimension
scores. Files are JSONL (`{"item_id", "model", "rater", "score", "dims": {...}}`; `infer_id` is
accepted for `item_id`) or CSV (columns `item_id`/`infer_id`, `model`, `rater`, `score`; every
other non-empty column is a per-dimension score). Bad rows are `RowError`s with file:line; with
`strict=False` they are skipped and counted, as in the data layer.

Agreement follows the paper's protocol (two raters per writing): every pair of raters that rated
the same writing is one observation pair. Cohen's kappa uses the scores rounded to the nearest
integer (the 1-5 scale), Pearson the raw scores, Krippendorff's alpha (interval) the full
rater x writing matrix with gaps.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
from scipy import stats

from howtobench.errors import DataError, RowError
from howtobench.meta.judgments import SkipReport

WritingKey = tuple[str, str]
"""(item_id, model): one writing."""


@dataclass(frozen=True)
class HumanRating:
    """One rater's score of one writing."""

    item_id: str
    model: str
    rater: str
    score: float
    dims: dict[str, float] = field(default_factory=dict)

    @property
    def writing(self) -> WritingKey:
        return (self.item_id, self.model)


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement over all rater pairs that share a writing."""

    kappa: float
    pearson: float
    alpha: float
    pairs: int
    writings: int
    raters: int


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return out


def _text(row: dict[str, Any], *names: str) -> str:
    for name in names:
        value = row.get(name)
        if value is not None and str(value).strip():
            return str(value).strip()
    raise ValueError(f"missing {' / '.join(names)}")


def rating_from_row(row: dict[str, Any], extra_dims: dict[str, Any]) -> HumanRating:
    """Validate one parsed row; raises ValueError with the reason."""
    dims = {str(k): _number(v, f"dimension {k!r}") for k, v in extra_dims.items() if v not in (None, "")}
    return HumanRating(
        item_id=_text(row, "item_id", "infer_id"),
        model=_text(row, "model"),
        rater=_text(row, "rater"),
        score=_number(row.get("score"), "score"),
        dims=dims,
    )


_BASE_COLUMNS = {"item_id", "infer_id", "model", "rater", "score"}


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any] | None, dict[str, Any], str]]:
    out: list[tuple[int, dict[str, Any] | None, dict[str, Any], str]] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append((lineno, None, {}, f"invalid JSON: {exc.msg}"))
            continue
        if not isinstance(row, dict):
            out.append((lineno, None, {}, "not a JSON object"))
            continue
        dims = row.get("dims", row.get("dimensions")) or {}
        out.append((lineno, row, dims if isinstance(dims, dict) else {"dims": dims}, ""))
    return out


def _csv_rows(path: Path) -> list[tuple[int, dict[str, Any] | None, dict[str, Any], str]]:
    out: list[tuple[int, dict[str, Any] | None, dict[str, Any], str]] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            lineno = reader.line_num
            if None in row:
                out.append((lineno, None, {}, "more cells than header columns"))
                continue
            dims = {k: v for k, v in row.items() if k not in _BASE_COLUMNS}
            out.append((lineno, row, dims, ""))
    return out


def load_ratings(path: Path, *, strict: bool = False, report: SkipReport | None = None) -> list[HumanRating]:
    """Ratings from a `.jsonl` / `.json` or `.csv` file; a rater rating one writing twice is a bad row."""
    if not path.is_file():
        raise DataError(f"{path}: human ratings file not found")
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else _jsonl_rows(path)
    seen: set[tuple[str, str, str]] = set()
    out: list[HumanRating] = []
    for lineno, row, dims, problem in rows:
        try:
            if row is None:
                raise ValueError(problem)
            rating = rating_from_row(row, dims)
            key = (rating.item_id, rating.model, rating.rater)
            if key in seen:
                raise ValueError(f"rater {rating.rater!r} already rated {rating.item_id}/{rating.model}")
            seen.add(key)
            out.append(rating)
        except ValueError as exc:
            err = RowError(path, lineno, str(exc))
            if strict:
                raise err from None
            if report is not None:
                report.skipped.append(err)
    if not out:
        raise DataError(f"{path}: no usable human ratings")
    return out


def average_scores(ratings: list[HumanRating], dim: str | None = None) -> dict[WritingKey, float]:
    """Mean over raters per writing (the paper averages its two raters); `dim` picks a dimension instead."""
    acc: dict[WritingKey, list[float]] = defaultdict(list)
    for r in ratings:
        value = r.score if dim is None else r.dims.get(dim)
        if value is not None:
            acc[r.writing].append(value)
    return {k: float(np.mean(v)) for k, v in acc.items()}


def rater_pairs(ratings: list[HumanRating]) -> np.ndarray:
    """(n_pairs, 2) scores: every pair of distinct raters on the same writing, raters in name order."""
    per_writing: dict[WritingKey, list[HumanRating]] = defaultdict(list)
    for r in ratings:
        per_writing[r.writing].append(r)
    pairs = [
        (a.score, b.score)
        for group in per_writing.values()
        for a, b in itertools.combinations(sorted(group, key=lambda r: r.rater), 2)
    ]
    return np.asarray(pairs, dtype=float).reshape(-1, 2)


def round_half_up(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer with .5 going up (3.5 -> 4), as a rater would read the scale."""
    return np.floor(x + 0.5)


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Unweighted Cohen's kappa of two label vectors; NaN when chance agreement is total."""
    labels = np.unique(np.concatenate([a, b]))
    ia, ib = np.searchsorted(labels, a), np.searchsorted(labels, b)
    confusion = np.zeros((labels.size, labels.size))
    np.add.at(confusion, (ia, ib), 1.0)
    confusion /= confusion.sum()
    observed = float(np.trace(confusion))
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    return float("nan") if expected == 1.0 else (observed - expected) / (1.0 - expected)


def krippendorff_alpha(ratings: list[HumanRating]) -> float:
    """Interval alpha over the rater x writing matrix (NaN where a rater did not rate a writing)."""
    raters = sorted({r.rater for r in ratings})
    writings = sorted({r.writing for r in ratings})
    ri = {name: i for i, name in enumerate(raters)}
    wi = {key: j for j, key in enumerate(writings)}
    matrix = np.full((len(raters), len(writings)), np.nan)
    for r in ratings:
        matrix[ri[r.rater], wi[r.writing]] = r.score
    try:
        return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"))
    except (ValueError, ZeroDivisionError):
        return float("nan")


def agreement(ratings: list[HumanRating]) -> Agreement:
    """Kappa (rounded scale), Pearson and Krippendorff's alpha; NaN where fewer than 2 pairs exist."""
    pairs = rater_pairs(ratings)
    n_writings = len({r.writing for r in ratings})
    n_raters = len({r.rater for r in ratings})
    if len(pairs) < 2:
        nan = float("nan")
        return Agreement(nan, nan, nan, len(pairs), n_writings, n_raters)
    a, b = pairs[:, 0], pairs[:, 1]
    kappa = cohen_kappa(round_half_up(a), round_half_up(b))
    constant = np.ptp(a) == 0 or np.ptp(b) == 0
    pearson = float("nan") if constant else float(stats.pearsonr(a, b)[0])
    return Agreement(kappa, pearson, krippendorff_alpha(ratings), len(pairs), n_writings, n_raters)
