"""Out of a study: the ratings file `meta correlate` / `meta agreement` read, and `rate status`.

Only complete ratings leave the study (a MetaEditor score; in ToW mode the overall score and every leaf of
the task). One JSONL line per rating, in the format of `howtobench.meta.human`:
`{"item_id", "model", "rater", "score", "dims"}` plus what a researcher wants next to it (task, genre,
error types, comment, when it was last changed). In ToW mode `dims` holds each leaf's score as the judge
reports it (an `llm-scale` answer 1-3 mapped to 0/5/10 by the tree), and `leaf_answers` the raw answers.
Agreement in `rate status` is computed by `howtobench.meta.agreement.agreement`, the measures `meta agreement`
prints, so both always agree.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.document import Table
from howtobench.errors import OutputError
from howtobench.meta.agreement import Agreement, agreement
from howtobench.meta.human import HumanRating
from howtobench.rate.assign import progress
from howtobench.rate.store import StoredRating
from howtobench.rate.study import Study


@dataclass(frozen=True)
class ExportSummary:
    ratings: int
    incomplete: int
    raters: int
    writings: int
    short_of_raters: int
    """Writings with fewer complete ratings than the study asks for."""


def _leaf_scores(study: Study, task: str, dims: dict[str, int]) -> dict[str, float]:
    leaves = {leaf.id: leaf for leaf in study.protocol.leaves(task)}
    return {leaf_id: leaves[leaf_id].score_of(raw) for leaf_id, raw in dims.items() if leaf_id in leaves}


def export_rows(study: Study) -> list[dict[str, Any]]:
    """The complete ratings as export records, sorted by item, model and rater."""
    items = {it.id: it for it in study.store.items()}
    rows: list[dict[str, Any]] = []
    for r in study.store.ratings():
        if not r.complete:
            continue
        item = items[r.item_id]
        row: dict[str, Any] = {
            "item_id": r.item_id, "model": r.model, "rater": r.rater, "score": r.rating.score,
            "dims": _leaf_scores(study, item.task, r.rating.dims), "task": item.task, "genre": item.genre,
            "mode": study.settings.mode, "comment": r.rating.comment, "updated_at": r.updated_at,
        }
        if study.settings.mode == "metaeditor":
            row["error_types"] = list(r.rating.error_types)
        else:
            row["leaf_answers"] = dict(r.rating.dims)
        rows.append(row)
    return rows


def human_ratings(study: Study) -> list[HumanRating]:
    """The complete ratings as `meta` reads them (the same numbers as the export)."""
    return [
        HumanRating(item_id=row["item_id"], model=row["model"], rater=row["rater"], score=float(row["score"]),
                    dims={k: float(v) for k, v in row["dims"].items()})
        for row in export_rows(study)
    ]


def export_study(study: Study, out: Path) -> ExportSummary:
    """Write the ratings file atomically (a reader never sees half a file) and say what it holds."""
    rows = export_rows(study)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except OSError as exc:
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return _summary(study, rows, study.store.ratings())


def _summary(study: Study, rows: list[dict[str, Any]], stored: list[StoredRating]) -> ExportSummary:
    per_writing: dict[tuple[str, str], int] = {(w.item_id, w.model): 0 for w in study.store.writings()}
    for row in rows:
        per_writing[(row["item_id"], row["model"])] += 1
    short = sum(1 for n in per_writing.values() if n < study.settings.raters_per_writing)
    return ExportSummary(
        ratings=len(rows), incomplete=sum(not r.complete for r in stored), raters=len({r["rater"] for r in rows}),
        writings=sum(1 for n in per_writing.values() if n), short_of_raters=short,
    )


# ------------------------------------------------------------------ status

_COLUMNS = ["Cohen's κ", "Pearson", "Krippendorff's α", "pairs", "writings", "raters"]


def _agreement_cells(agr: Agreement) -> list[float | int]:
    """The default `meta agreement` statistics (unweighted κ, Pearson, interval α) and the sizes, in `_COLUMNS`."""
    return [*(s.value for s in agr.statistics), agr.pairs, agr.writings, agr.raters]


def progress_table(study: Study) -> Table:
    """One row per rater: instructions taken, finished and skipped, responses rated."""
    table = Table(
        f"Raters of {study.folder} ({study.settings.mode}, {study.settings.raters_per_writing} raters per writing)",
        ["rater", "instructions", "finished", "skipped", "responses rated", "of"],
    )
    covered = total = 0
    for rater in study.store.raters():
        p = progress(study, rater)
        covered, total = p.writings_covered, p.writings_total
        table.add_row(rater, len(p.groups), p.groups_done, p.skipped, p.responses_rated, p.responses_total)
    if not table.rows:
        total = sum(study.store.writing_counts().values())
    table.notes.append(f"{covered} of {total} writings have {study.settings.raters_per_writing} complete ratings")
    return table


def agreement_table(study: Study) -> Table:
    """The running agreement of `meta agreement` on the overall score (and, in ToW mode, on each leaf)."""
    ratings = human_ratings(study)
    measures: list[tuple[str, list[HumanRating]]] = [("overall score", ratings)]
    leaf_ids = sorted({d for r in ratings for d in r.dims})
    for leaf_id in leaf_ids:
        on_leaf = [dataclasses.replace(r, score=r.dims[leaf_id]) for r in ratings if leaf_id in r.dims]
        measures.append((leaf_id, on_leaf))
    found = [(name, agreement(subset)) for name, subset in measures if subset]
    title = "Running agreement (as `meta agreement` computes it)"
    table = Table(title, ["rated", *_COLUMNS] if found else ["rated"])
    for name, agr in found:
        table.add_row(name, *_agreement_cells(agr))
    if found:
        table.notes.append("; ".join(f"{s.name}: {s.variant}" for s in found[0][1].statistics))
    else:
        table.notes.append("no complete rating yet")
    table.notes.append("a measure needs at least two writings rated by two raters; '-' until then")
    return table
