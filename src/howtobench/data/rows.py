"""Read JSONL files with file:line errors: pydantic records (judgments, weight samples) or plain JSON objects.

The leaderboard, the meta-evaluation, the inconsistency analysis, the build stage files and `headings` all
read such files; these readers keep their handling of blank lines, unreadable files and bad rows the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from howtobench.errors import DataError, RowError

M = TypeVar("M", bound=BaseModel)


def read_model_rows(
    path: Path, model: type[M], what: str, *, strict: bool = True, skipped: list[RowError] | None = None
) -> list[M]:
    """Every non-blank line of `path` parsed as `model`, in file order.

    A bad line is a RowError "not a <what>: <reason>" naming file and line; with `strict=False` it is appended
    to `skipped` (when given) and left out instead, so one torn line of an interrupted run hides nothing else.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {what} file {path}: {exc}") from exc
    out: list[M] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as exc:
            err = RowError(path, number, f"not a {what}: {exc.errors()[0]['msg']}")
            if strict:
                raise err from exc
            if skipped is not None:
                skipped.append(err)
    return out


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSONL file; anything but a JSON object is a RowError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RowError(path, number, f"not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise RowError(path, number, "expected a JSON object")
        yield number, row
