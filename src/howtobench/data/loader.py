"""Load HoWToBench items and writings from JSONL, row by row, without losing anything silently.

Layout of the public release: `<root>/<task>/aligned.jsonl` (one item per line) and
`<root>/<task>/inferences/<model>.jsonl` (one writing per line). Writings may also come from any user JSONL
file with an item id (`infer_id` or `item_id`), a `model` and the text (`output` or `text`).

Every bad row (bytes that are not UTF-8, malformed JSON, a missing field, a duplicate id, an unknown task, a
writing for an item that is not in the benchmark) becomes a `RowError` naming the file and the 1-based line.
With `strict=True` the first one is raised; otherwise bad rows are skipped and counted in a `LoadReport`, whose
`summary()` says what was skipped. Empty writings are kept (they are a fact about the model, not bad input).
A writing for a benchmark item that a filter left out (`--limit`, `--task`, `--genre`, `--ids`: the `selected`
ids) is not bad: it is left out silently, before the duplicate check.
Plain `json` plus pydantic `model_validate` keeps the whole release (13,020 writings) well under two seconds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from howtobench.data.genres import GENRES, detail_genre_for, genre_for
from howtobench.data.models import TASKS, Item, Writing
from howtobench.data.subset import stratified_subset
from howtobench.errors import DataError, RowError
from howtobench.suggest import unknown_name

log = logging.getLogger(__name__)

ITEM_FIELDS: tuple[str, ...] = ("infer_id", "task_type", "sub_task", "basic_instruction")
ALIGNED_FILE = "aligned.jsonl"
INFERENCES_DIR = "inferences"
_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class LoadReport:
    """What a load kept and what it skipped, per file; pass one in to see the skipped rows afterwards."""

    loaded: dict[Path, int] = field(default_factory=dict)
    errors: list[RowError] = field(default_factory=list)

    def add_loaded(self, path: Path, n: int) -> None:
        self.loaded[path] = self.loaded.get(path, 0) + n

    @property
    def skipped(self) -> int:
        return len(self.errors)

    def skipped_in(self, path: Path) -> list[RowError]:
        return [e for e in self.errors if e.path == path]

    def summary(self) -> list[str]:
        """One line per file with bad rows: `skipped N bad rows in FILE (first: line L: reason)`."""
        lines = []
        for path in dict.fromkeys(e.path for e in self.errors):
            errs = self.skipped_in(path)
            first = errs[0]
            noun = "row" if len(errs) == 1 else "rows"
            lines.append(f"skipped {len(errs)} bad {noun} in {path} (first: line {first.line}: {first.reason})")
        return lines


class _Rows:
    """Reads one JSONL file as (line number, JSON object) pairs and routes bad rows to strict-raise or report."""

    def __init__(self, path: Path, *, strict: bool, report: LoadReport) -> None:
        self.path = path
        self.strict = strict
        self.report = report

    def bad(self, line: int, reason: str) -> None:
        err = RowError(self.path, line, reason)
        if self.strict:
            raise err
        self.report.errors.append(err)

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise DataError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        if data.startswith(_UTF8_BOM):
            data = data[len(_UTF8_BOM) :]
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if raw.strip():
                obj = self._parse(lineno, raw)
                if obj is not None:
                    yield lineno, obj

    def _parse(self, lineno: int, raw: bytes) -> dict[str, Any] | None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad(lineno, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
            return None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            self.bad(lineno, f"malformed JSON: {exc.msg} (column {exc.colno})")
            return None
        if not isinstance(obj, dict):
            self.bad(lineno, f"expected a JSON object, got {type(obj).__name__}")
            return None
        return obj


def _finish(report: LoadReport, own_report: bool) -> None:
    """Nobody asked for the report: still say what was skipped, so a skip is never silent."""
    if own_report:
        for line in report.summary():
            log.warning(line)


def _validation_reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "row"
    return f"field {where!r}: {err['msg']}"


# ---------------------------------------------------------------- items


def _check_tasks(tasks: Iterable[str] | None) -> tuple[str, ...]:
    chosen = tuple(tasks) if tasks else TASKS
    unknown = [t for t in chosen if t not in TASKS]
    if unknown:
        raise DataError(unknown_name("task", unknown[0], TASKS))
    return chosen


def _tasks_under(root: Path, tasks: Iterable[str] | None) -> tuple[str, ...]:
    """Named tasks must all exist; with none named, every task that has an aligned.jsonl (at least one)."""
    if tasks:
        return _check_tasks(tasks)
    present = tuple(t for t in TASKS if (Path(root) / t / ALIGNED_FILE).is_file())
    if not present:
        raise DataError(
            f"no benchmark under {root} (no <task>/{ALIGNED_FILE}): pass --data DIR, set HOWTOBENCH_DATA, "
            "or run `howtobench data download`"
        )
    return present


def load_items(
    root: Path, tasks: Iterable[str] | None = None, *, strict: bool = False, report: LoadReport | None = None
) -> list[Item]:
    """All items of the given tasks (default: every task present), in file order, genre set from `sub_task`."""
    own = report is None
    rep = report if report is not None else LoadReport()
    seen: dict[str, tuple[Path, int]] = {}
    items: list[Item] = []
    for task in _tasks_under(root, tasks):
        path = Path(root) / task / ALIGNED_FILE
        if not path.is_file():
            raise DataError(
                f"no benchmark file {path}: pass --data DIR, set HOWTOBENCH_DATA, or run `howtobench data download`"
            )
        rows = _Rows(path, strict=strict, report=rep)
        before = len(items)
        for lineno, obj in rows:
            item = _item_from_row(obj, task, lineno, rows, seen)
            if item is not None:
                items.append(item)
        rep.add_loaded(path, len(items) - before)
    _finish(rep, own)
    return items


def _item_from_row(
    obj: dict[str, Any], task: str, lineno: int, rows: _Rows, seen: dict[str, tuple[Path, int]]
) -> Item | None:
    missing = [f for f in ITEM_FIELDS if f not in obj]
    if missing:
        rows.bad(lineno, f"missing field {missing[0]!r}")
        return None
    if obj["task_type"] not in TASKS:
        rows.bad(lineno, f"unknown task {obj['task_type']!r} (expected one of {', '.join(TASKS)})")
        return None
    if obj["task_type"] != task:
        rows.bad(lineno, f"task_type {obj['task_type']!r} in the {task!r} file")
        return None
    item_id = obj["infer_id"]
    if isinstance(item_id, str) and item_id in seen:
        first_path, first_line = seen[item_id]
        rows.bad(lineno, f"duplicate infer_id {item_id!r} (first at {first_path}:{first_line})")
        return None
    try:
        item = Item.model_validate({**obj, "genre": _genre_of(obj), "language": obj.get("language", "zh")})
    except ValidationError as exc:
        rows.bad(lineno, _validation_reason(exc))
        return None
    seen[item.id] = (rows.path, lineno)
    return item


def _genre_of(obj: dict[str, Any]) -> str:
    """An explicit known `genre` in user data wins; otherwise map the `sub_task` label."""
    explicit = obj.get("genre")
    if isinstance(explicit, str) and explicit in GENRES:
        return GENRES[explicit].reported_as
    sub_task = obj.get("sub_task")
    return genre_for(sub_task) if isinstance(sub_task, str) else "others"


# ---------------------------------------------------------------- writings


def load_writings_file(
    path: Path,
    items: Iterable[Item] | Mapping[str, Item] | None = None,
    *,
    strict: bool = False,
    report: LoadReport | None = None,
    selected: Collection[str] | None = None,
) -> list[Writing]:
    """Writings from one JSONL file; with `items`, a writing for an item not among them is a bad row.

    With `selected` (item ids), only writings of those items are returned; the others are not bad rows.
    """
    own = report is None
    rep = report if report is not None else LoadReport()
    known = _id_set(items)
    rows = _Rows(Path(path), strict=strict, report=rep)
    seen: dict[tuple[str, str], int] = {}
    out: list[Writing] = []
    for lineno, obj in rows:
        writing = _writing_from_row(obj, lineno, rows, known, seen, selected)
        if writing is not None:
            out.append(writing)
    rep.add_loaded(rows.path, len(out))
    _finish(rep, own)
    return out


def _id_set(items: Iterable[Item] | Mapping[str, Item] | None) -> set[str] | None:
    if items is None:
        return None
    if isinstance(items, Mapping):
        return set(items)
    return {it.id for it in items}


def _writing_from_row(
    obj: dict[str, Any], lineno: int, rows: _Rows, known: set[str] | None, seen: dict[tuple[str, str], int],
    selected: Collection[str] | None = None,
) -> Writing | None:
    item_id = obj.get("infer_id", obj.get("item_id"))
    if item_id is None:
        rows.bad(lineno, "missing field 'infer_id' (or 'item_id')")
        return None
    if "model" not in obj:
        rows.bad(lineno, "missing field 'model'")
        return None
    if "output" not in obj and "text" not in obj:
        rows.bad(lineno, "missing field 'output' (or 'text')")
        return None
    text = obj["output"] if "output" in obj else obj["text"]
    extras = {k: v for k, v in obj.items() if k not in ("infer_id", "item_id", "output", "text")}
    try:
        # A null text is a generation that produced nothing: kept as an empty writing, never dropped.
        writing = Writing.model_validate({**extras, "infer_id": item_id, "output": "" if text is None else text})
    except ValidationError as exc:
        rows.bad(lineno, _validation_reason(exc))
        return None
    if known is not None and writing.item_id not in known:
        rows.bad(lineno, f"item id {writing.item_id!r} is not in the benchmark")
        return None
    if selected is not None and writing.item_id not in selected:
        return None  # a benchmark item the filters left out: not a bad row
    key = (writing.item_id, writing.model)
    if key in seen:
        rows.bad(lineno, f"duplicate writing for item {key[0]!r} by model {key[1]!r} (first at line {seen[key]})")
        return None
    seen[key] = lineno
    return writing


def release_models(root: Path, task: str) -> list[str]:
    """Model names with a writings file in `<root>/<task>/inferences/` (case-insensitive order)."""
    folder = Path(root) / task / INFERENCES_DIR
    if not folder.is_dir():
        return []
    return sorted((p.stem for p in folder.glob("*.jsonl")), key=str.lower)


def _check_model_names(wanted: set[str], by_task: dict[str, list[str]]) -> None:
    """Every asked-for model must exist in one of the chosen tasks: a mistyped name among right ones was dropped
    silently before (the leaderboard simply lacked that model). Raises naming the first unknown one."""
    known = sorted({m for models in by_task.values() for m in models}, key=str.lower)
    unknown = sorted(wanted - set(known))
    if unknown:
        raise DataError(unknown_name("model", unknown[0], known))


def load_release_writings(
    root: Path,
    tasks: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
    *,
    strict: bool = False,
    report: LoadReport | None = None,
    items: Sequence[Item] | None = None,
    selected: Collection[str] | None = None,
) -> list[Writing]:
    """The release's writings for the given tasks and models; each is checked against its task's items.

    Pass `items` (as loaded by `load_items`, before any filter) to avoid reading the benchmark a second time, and
    `selected` (item ids) to keep only the writings of the filtered items without calling the others bad.
    """
    own = report is None
    rep = report if report is not None else LoadReport()
    chosen = _tasks_under(root, tasks)
    if items is None:
        items = load_items(root, chosen, strict=strict, report=rep)
    wanted = set(models) if models else None
    by_task = {task: release_models(root, task) for task in chosen}
    if wanted is not None:
        _check_model_names(wanted, by_task)
    out: list[Writing] = []
    for task, available in by_task.items():
        if wanted is not None and not wanted & set(available):
            raise DataError(f"no writings of {sorted(wanted)} for task {task!r} (available: {', '.join(available)})")
        task_items = {it.id: it for it in items if it.task == task}
        for model in available:
            if wanted is None or model in wanted:
                path = Path(root) / task / INFERENCES_DIR / f"{model}.jsonl"
                out.extend(load_writings_file(path, task_items, strict=strict, report=rep, selected=selected))
    _finish(rep, own)
    return out


# ---------------------------------------------------------------- selection


def select_items(
    items: Sequence[Item],
    tasks: Iterable[str] | None = None,
    genres: Iterable[str] | None = None,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    subset: int | None = None,
    seed: int = 0,
) -> list[Item]:
    """Filter items by task, genre (a Table 4 id, or a finer id such as `official`) and id; then keep the
    first `limit` per task in file order, or a seeded `subset` stratified by task x genre (`data.subset`)."""
    if limit is not None and subset is not None:
        raise DataError("give --limit (the first N items per task) or --subset (N items over every genre), not both")
    task_set = set(_check_tasks(tasks)) if tasks else None
    genre_set = _check_genres(genres)
    id_set = set(ids) if ids else None
    if id_set is not None:
        missing = sorted(id_set - {it.id for it in items})
        if missing:
            raise DataError(f"unknown item id {missing[0]!r} ({len(missing)} of the requested ids are not loaded)")
    per_task: dict[str, int] = {}
    out: list[Item] = []
    for it in items:
        if task_set is not None and it.task not in task_set:
            continue
        if genre_set is not None and it.genre not in genre_set and detail_genre_for(it.sub_task) not in genre_set:
            continue
        if id_set is not None and it.id not in id_set:
            continue
        if limit is not None and per_task.get(it.task, 0) >= limit:
            continue
        per_task[it.task] = per_task.get(it.task, 0) + 1
        out.append(it)
    if subset is not None and subset > len(out):
        raise DataError(f"--subset {subset}: the selection holds only {len(out):,} items; give at most {len(out):,} "
                        "(or leave --subset out to take them all)")
    return stratified_subset(out, subset, seed) if subset is not None else out


def _check_genres(genres: Iterable[str] | None) -> set[str] | None:
    if not genres:
        return None
    chosen = set(genres)
    unknown = sorted(chosen - set(GENRES))
    if unknown:
        raise DataError(unknown_name("genre", unknown[0], GENRES))
    return chosen
