"""Step 5 (paper 4.6, App. G): export items for human review, import the edits as a benchmark.

`export` writes `05_review.jsonl` (one editable item per line: `keep: false` drops it, `note` says why) and
`05_review.html`, a static page with the same items in text boxes and a button that downloads the edited
JSONL. Every model or user string is HTML-escaped by Jinja2's autoescape. Re-exporting keeps rows already
in the review file (edits are not lost) and adds newly made items.

`import_review` validates every row (file:line on the first bad one) and writes a benchmark directory in the
release layout: `<out>/<task>/aligned.jsonl` with infer_id, bench_id, task_type, sub_task, basic_instruction,
information, reference — plus `language`, which the data loader reads (the release, all Chinese, omits
it) — so `howtobench data stats`, `judge`, `generate` and the rest run on it unchanged. Where each item came
from (text id, source, license, reviewer note) goes to `<out>/provenance.jsonl`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from howtobench.construct.completion import BLANK
from howtobench.construct.records import DraftItem, ReviewItem
from howtobench.construct.workfile import ITEMS, REVIEW, REVIEW_HTML, iter_rows, read_existing, read_stage, write_rows
from howtobench.data.genres import GENRES
from howtobench.data.models import TASKS
from howtobench.errors import ConfigError, RowError

PROVENANCE = "provenance.jsonl"


@dataclass
class ImportReport:
    written: dict[str, int] = field(default_factory=dict)
    dropped: int = 0
    edited: int = 0


def export_review(build_dir: Path) -> tuple[int, int]:
    """Write the review JSONL and HTML; returns (items in the file, items added now)."""
    made = [row for row in read_stage(build_dir / ITEMS, DraftItem, "item_id").values() if row.ok]
    existing = read_existing(build_dir / REVIEW, ReviewItem, "item_id")
    added = [ReviewItem(**row.model_dump()) for row in made if row.item_id not in existing]
    rows = [*existing.values(), *added]
    write_rows(build_dir / REVIEW, rows)
    (build_dir / REVIEW_HTML).write_text(render_html(rows), encoding="utf-8")
    return len(rows), len(added)


def render_html(rows: list[ReviewItem]) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("howtobench.construct", "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    view = [{"row": r, "json": r.model_dump_json(), "info_rows": _rows_for(r.information),
             "ref_rows": _rows_for(r.reference)} for r in rows]
    return env.get_template("review.html.j2").render(items=view)


def _rows_for(text: str) -> int:
    return max(2, min(30, text.count("\n") + len(text) // 90 + 1))


def check_row(row: ReviewItem) -> str | None:
    """Why a reviewed item cannot go into a benchmark, or None."""
    if row.genre not in GENRES:
        return f"unknown genre {row.genre!r}; use one of: {', '.join(GENRES)}"
    if not row.instruction.strip():
        return "instruction is empty"
    if not row.reference.strip():
        return "reference is empty"
    if row.task == "completion" and row.information.count(BLANK) != 1:
        return f"a completion item needs exactly one {BLANK} in its information"
    if row.task == "guide" and not row.information.strip():
        return "a guide item needs grounding information"
    return None


def read_review(path: Path) -> list[ReviewItem]:
    """The reviewed rows, validated; the first bad row raises RowError with file and line."""
    rows: list[ReviewItem] = []
    seen: dict[str, int] = {}
    for line, row in iter_rows(path, ReviewItem):
        if row.item_id in seen:
            raise RowError(path, line, f"duplicate item_id {row.item_id!r} (first at line {seen[row.item_id]})")
        problem = check_row(row) if row.keep else None
        if problem:
            raise RowError(path, line, problem)
        seen[row.item_id] = line
        rows.append(row)
    return rows


def release_row(row: ReviewItem) -> dict[str, Any]:
    """One line of `<task>/aligned.jsonl`; sub_task is the genre's label the genre mapping reads back."""
    genre = GENRES[row.genre]
    return {"infer_id": row.item_id, "bench_id": row.bench_id, "task_type": row.task,
            "sub_task": genre.zh if row.language == "zh" else genre.id, "basic_instruction": row.instruction,
            "information": row.information, "reference": row.reference, "language": row.language}


def import_review(build_dir: Path, out: Path, *, review: Path | None = None, overwrite: bool = False) -> ImportReport:
    """Apply the reviewed file and write the benchmark directory `out` in the release layout."""
    rows = read_review(review or build_dir / REVIEW)
    made = read_existing(build_dir / ITEMS, DraftItem, "item_id")
    report = ImportReport()
    by_task: dict[str, list[ReviewItem]] = {t: [] for t in TASKS}
    for row in rows:
        if not row.keep:
            report.dropped += 1
            continue
        by_task[row.task].append(row)
        if _edited(row, made.get(row.item_id)):
            report.edited += 1
    _write_benchmark(out, by_task, overwrite)
    report.written = {t: len(r) for t, r in by_task.items() if r}
    return report


def _edited(row: ReviewItem, draft: DraftItem | None) -> bool:
    fields = ("genre", "instruction", "information", "reference")
    return draft is None or any(getattr(row, f) != getattr(draft, f) for f in fields)


def _write_benchmark(out: Path, by_task: dict[str, list[ReviewItem]], overwrite: bool) -> None:
    targets = [out / task / "aligned.jsonl" for task, rows in by_task.items() if rows]
    if not targets:
        raise ConfigError("no items to import: every item was dropped or none was made")
    clash = [p for p in targets if p.exists()]
    if clash and not overwrite:
        raise ConfigError(f"{clash[0]} exists; pass --overwrite to replace the benchmark in {out}")
    for task, rows in by_task.items():
        path = out / task / "aligned.jsonl"
        if not rows:
            if path.exists() and overwrite:
                path.unlink()  # a task emptied by the review must not keep its old items
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(release_row(r), ensure_ascii=False) + "\n" for r in rows), "utf-8")
    provenance = [{"infer_id": r.item_id, "text_id": r.text_id, "task": r.task, "genre": r.genre,
                   "source": r.source, "license": r.license, "note": r.note}
                  for rows in by_task.values() for r in rows]
    (out / PROVENANCE).write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in provenance), "utf-8")
