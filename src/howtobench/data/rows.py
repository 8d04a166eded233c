"""Read JSONL files with file:line errors: pydantic records (judgments, weight samples) or plain JSON objects.

The leaderboard, the meta-evaluation, the inconsistency analysis, the build stage files and `headings` all
read such files; these readers keep their handling of blank lines, unreadable files and bad rows the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from howtobench.errors import DataError, RowError
from howtobench.outputs import read_cause, refuse_non_regular

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


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
        raise DataError(f"cannot read {what} file {path}: {read_cause(exc)}") from exc
    out: list[M] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as exc:
            err = RowError(path, number, f"not a {what}: {_problem(exc, line, what)}")
            if strict:
                raise err from exc
            if skipped is not None:
                skipped.append(err)
    return out


WRITING_KEYS = ('"infer_id"', '"output"')


def _problem(exc: ValidationError, line: str, what: str) -> str:
    """The first problem with the field it is about (`score: Field required`, not `Field required`), and for a row
    of writings read as a judgment, what to do with it."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    text = f"{where}: {first['msg']}" if where else str(first["msg"])
    if what == "judgment" and all(key in line for key in WRITING_KEYS):
        text += (" (this looks like a writings file, infer_id / model / output: judge it first with `howtobench judge "
                 "--writings FILE`, or `howtobench run --writings FILE`)")
    return text


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSONL file; anything but a JSON object is a RowError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {read_cause(exc)}") from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, json_object(path, number, line)


def first_json_object(path: Path) -> dict[str, Any] | None:
    """The first non-blank line of a JSONL file as a JSON object (None when the file has no rows), read without
    reading the rest: what kind of file it is (see `is_judgments_row`)."""
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    return json_object(path, number, line)
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {read_cause(exc)}") from exc
    return None


def is_judgments_row(row: dict[str, Any]) -> bool:
    """A judgment carries `method` and `item_id`; a writing carries its text (`output` or `text`)."""
    return "method" in row and "item_id" in row and "output" not in row and "text" not in row


def is_judgments_file(path: Path) -> bool:
    """Whether a JSONL file holds judgments (its first row decides); False for writings and for a file with no rows
    (whose reader then says so)."""
    row = first_json_object(path)
    return row is not None and is_judgments_row(row)


def json_object(path: Path, number: int, line: str, expected: str = "a JSON object") -> dict[str, Any]:
    """Line `number` of `path` as a JSON object; anything else is a RowError ("not valid JSON (...)", or
    "expected <expected>" for JSON that is not an object: callers name the fields they want)."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RowError(path, number, f"not valid JSON ({exc.msg})") from exc
    if not isinstance(row, dict):
        raise RowError(path, number, f"expected {expected}")
    return row


def _reason(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return str(exc.errors()[0]["msg"])
    return str(getattr(exc, "msg", exc))


def read_appended_rows(path: Path, parse: Callable[[bytes], T], what: str, *, repair: bool) -> list[tuple[int, T]]:
    """(line number, row) of an append-only output file that a kill may have cut mid-write.

    Resume reads its own output back: a last line without its newline that does not parse is a write cut short,
    so it is dropped — and, with `repair`, cut off the file so appending continues on a clean line (a complete
    last record that only lacks its newline gets one). Any other bad line is a RowError "not <what>: ...".
    `parse` raises ValueError (pydantic's ValidationError and json's JSONDecodeError both are).
    """
    if not path.exists():
        return []
    refuse_non_regular(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    rows: list[tuple[int, T]] = []
    offset = 0
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                rows.append((number, parse(raw)))
            except ValueError as exc:
                if number != len(lines):
                    raise RowError(path, number, f"not {what}: {_reason(exc)}") from exc
                if repair:
                    with path.open("r+b") as handle:
                        handle.truncate(offset)
                return rows
        offset += len(raw) + 1
    if repair and data and not data.endswith(b"\n"):
        with path.open("ab") as handle:
            handle.write(b"\n")
    return rows
