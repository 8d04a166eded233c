"""Human ratings: import and average per writing (agreement between raters is in `meta.agreement`).

A rating is one rater's score for one writing (item id + model), optionally with per-dimension
scores. Files are JSONL (`{"item_id", "model", "rater", "score", "dims": {...}}`; `infer_id` is
accepted for `item_id`) or CSV (columns `item_id`/`infer_id`, `model`, `rater`, `score`; every
other non-empty column is a per-dimension score). Bad rows are `RowError`s with file:line; with
`strict=False` they are skipped and counted, as in the data layer.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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
