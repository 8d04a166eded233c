"""Read a JSONL file of pydantic records (judgments, weight samples, ...) with file:line errors.

The leaderboard, the meta-evaluation and the inconsistency analysis all read such files; one reader keeps
their handling of blank lines, unreadable files and bad rows the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

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
