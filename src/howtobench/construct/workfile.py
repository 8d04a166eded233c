"""The build directory: one JSONL stage file per step, so every step is resumable and reviewable.

A build directory holds, in order, `01_ingest.jsonl` (texts), `02_classify.jsonl` (genres, editable),
`03_filter.jsonl` (quality scores), `04_items.jsonl` (drafted items), `05_review.jsonl` + `05_review.html`
(the review copy the user edits). Each step reads the previous file, so a user can stop, inspect or edit a
file by hand, and go on. Stage files are append-as-you-go while a step runs (a killed run loses nothing) and
are rewritten once at the end in input order; when an id appears twice the last row wins, which is what a
resumed run needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from howtobench.data.rows import iter_json_objects
from howtobench.errors import DataError, RowError
from howtobench.outputs import write_text_atomic
from howtobench.runloop import DurableLines

INGEST = "01_ingest.jsonl"
CLASSIFY = "02_classify.jsonl"
FILTER = "03_filter.jsonl"
ITEMS = "04_items.jsonl"
REVIEW = "05_review.jsonl"
REVIEW_HTML = "05_review.html"

M = TypeVar("M", bound=BaseModel)


def iter_rows(path: Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """Parse a stage file line by line; a bad line raises RowError naming the file and line."""
    if not path.exists():
        raise DataError(f"{path} does not exist: run the previous build step first")
    for number, raw in iter_json_objects(path):
        try:
            yield number, model.model_validate(raw)
        except ValidationError as exc:
            raise RowError(path, number, _first_error(exc)) from exc


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "row"
    return f"{where}: {err['msg']}"


def read_stage(path: Path, model: type[M], key: str) -> dict[str, M]:
    """All rows of a stage file keyed by `key` (last row wins), in first-seen order."""
    rows: dict[str, M] = {}
    for _, row in iter_rows(path, model):
        rows[str(getattr(row, key))] = row
    return rows


def read_existing(path: Path, model: type[M], key: str) -> dict[str, M]:
    """Like read_stage, but an absent file is simply an empty stage (a fresh run)."""
    return read_stage(path, model, key) if path.exists() else {}


class StageRow(Protocol):
    """A row of a stage file: whether its unit succeeded, and its JSON line."""

    ok: bool

    def model_dump_json(self) -> str: ...


class StageWriter:
    """Appends rows as they finish (flushed at once, fsynced every half second and at the end: `DurableLines`) so
    an interrupted step can resume from what it already wrote."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = DurableLines(path)

    def write(self, row: StageRow) -> None:
        self._lines.write(row.model_dump_json() + "\n")

    def __enter__(self) -> StageWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._lines.__exit__(kind, exc, tb)


def write_rows(path: Path, rows: Iterable[BaseModel]) -> None:
    """Atomically replace a stage file with `rows` (used to finalise a step in input order)."""
    write_text_atomic(path, "".join(row.model_dump_json() + "\n" for row in rows))
