"""Agreement inside a judge panel (judges.panel): Krippendorff's α (interval) and ICC(2,k), per task, for the root
and every leaf, and the writings the judges disagree on most, with each judge's reasons side by side.

Each panel judgment holds every judge's own judgment (`Judgment.panel.members`); a judge's value for a writing
is its root (or a leaf's score), missing when that judge failed it. α uses every writing with at least two
judges' values (interval level, in closed form: `stats.alpha`, equal to the `krippendorff` package but O(judges ×
writings) in memory, so a Guide-sized panel runs in seconds); ICC(2,k) — two-way random effects, absolute
agreement, the reliability of the k judges' mean (Shrout & Fleiss 1979), which is what the panel's `mean` score
is — needs every judge's value, so it uses the complete writings only, and says how many:

    ICC(2,k) = (MS_R − MS_E) / (MS_R + (MS_C − MS_E) / n)

with MS_R the writings' (rows') mean square, MS_C the judges' (columns'), MS_E the residual, n the writings.

Empty writings follow `--empty` as everywhere else: every judge gives an empty writing the same floor, so under
"exclude" (the default) they are left out of α, ICC and the disputed list — counted in the table's note — and
under "lowest" they count with that floor (and inflate agreement: the note says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.data.models import TASKS
from howtobench.document import Table
from howtobench.errors import DataError
from howtobench.judges.base import EmptyConvention, Judgment, check_empty, left_out_as_empty
from howtobench.stats.agreement import icc2k, interval_alpha

ROOT = "root"
TASK_NAMES = {"completion": "Completion", "guide": "Guide", "open": "Open", "all": "All"}
REASON_CHARS = 160


@dataclass(frozen=True)
class PanelData:
    """The panel's judgments (empty writings already left out under "exclude"), their judges' names in panel
    order, which leaves occur, every value once as a (judges × writings × measures) array (measures: the root,
    then `leaves`), and the empty writings: how many, and the rule that placed them."""

    judgments: list[Judgment]
    judges: list[str]
    leaves: list[str]
    values: np.ndarray
    empty: EmptyConvention = "exclude"
    n_empty: int = 0

    def measure(self, measure: str) -> np.ndarray:
        """(judges × writings) values of one measure, NaN where a judge has none."""
        values: np.ndarray = self.values[:, :, 0 if measure == ROOT else 1 + self.leaves.index(measure)]
        return values


def panel_data(judgments: Sequence[Judgment], empty: EmptyConvention = "exclude") -> PanelData:
    """The panel judgments among `judgments` (the last line of a writing wins); none is an error. Empty writings
    are dropped under `empty="exclude"` and counted either way."""
    check_empty(empty)
    latest = {(j.method, j.task, j.item_id, j.model): j for j in judgments if j.panel is not None}
    if not latest:
        raise DataError("no panel judgments (written by `howtobench judge --panel`) among the files given")
    n_empty = sum(j.status == "empty" for j in latest.values())
    rows = [j for j in latest.values() if not left_out_as_empty(j, empty)]
    judges = list(dict.fromkeys(name for j in rows for name in j.panel.members))  # type: ignore[union-attr]
    leaves = list(dict.fromkeys(leaf.name for j in rows for m in j.panel.members.values()  # type: ignore[union-attr]
                                for leaf in m.leaves))
    return PanelData(rows, judges, leaves, _values(rows, judges, leaves), empty, n_empty)


def _values(rows: Sequence[Judgment], judges: Sequence[str], leaves: Sequence[str]) -> np.ndarray:
    """Each judge's root and leaf scores, one pass over the records (a leaf looked up per writing and measure
    was the slow part at benchmark size)."""
    out = np.full((len(judges), len(rows), 1 + len(leaves)), np.nan)
    leaf_ix = {name: 1 + k for k, name in enumerate(leaves)}
    for w, j in enumerate(rows):
        for a, name in enumerate(judges):
            member = j.panel.members.get(name) if j.panel else None
            if member is None or member.status == "failed":
                continue
            if member.score is not None:
                out[a, w, 0] = member.score
            seen: set[str] = set()
            for leaf in member.leaves:  # a leaf's first occurrence, as the tables always read it
                if leaf.name not in seen and leaf.score is not None:
                    out[a, w, leaf_ix[leaf.name]] = leaf.score
                seen.add(leaf.name)
    return out


@dataclass(frozen=True)
class AgreementRow:
    task: str
    measure: str
    alpha: float
    icc: float
    n_alpha: int
    n_complete: int


def agreement(data: PanelData) -> list[AgreementRow]:
    """α and ICC(2,k) per task (then All) for the root and every leaf the task's judgments have."""
    out = []
    task_of = np.array([j.task for j in data.judgments], dtype=object)
    tasks = [t for t in TASKS if (task_of == t).any()]
    for task in [*tasks, "all"]:
        columns = np.ones(task_of.size, dtype=bool) if task == "all" else task_of == task
        for measure in [ROOT, *data.leaves]:
            m = data.measure(measure)[:, columns]
            present = np.isfinite(m)
            if not present.any():
                continue  # a leaf this task's tree does not have
            complete = present.all(axis=0)
            out.append(AgreementRow(task, measure, interval_alpha(m), icc2k(m[:, complete].T),
                                    int((present.sum(axis=0) >= 2).sum()), int(complete.sum())))
    return out


def agreement_table(data: PanelData) -> Table:
    table = Table(f"Agreement inside the panel ({', '.join(data.judges)})",
                  ["task", "measure", "Krippendorff α (interval)", "ICC(2,k)", "writings (α)",
                   "writings (ICC, all judges)"], digits=3)
    for row in agreement(data):
        table.add_row(TASK_NAMES[row.task], row.measure, row.alpha, row.icc, row.n_alpha, row.n_complete)
    table.notes.append(f"{len(data.judges)} judges; α over writings with at least two judges' values, ICC(2,k) "
                       "(two-way random, absolute agreement, mean of k judges) over writings every judge scored")
    table.notes.append(_empty_note(data))
    return table


def _empty_note(data: PanelData) -> str:
    if data.empty == "exclude":
        return (f"{data.n_empty} empty writings left out (--empty exclude): every judge gives them the same floor, "
                "which would inflate agreement")
    return (f"{data.n_empty} empty writings counted with the judges' floor (--empty lowest): they raise agreement "
            "without any judging")


def _reason(member: Judgment | None, leaf: str) -> str:
    if member is None:
        return "-"
    found = next((x for x in member.leaves if x.name == leaf), None)
    if found is None:
        return "; ".join(member.failures)[:REASON_CHARS] or "-"
    text = found.reason or found.error or "-"
    score = "-" if found.score is None else f"{found.score:g}"
    return f"{score}: {' '.join(text.split())[:REASON_CHARS]}"


def disagreements_table(data: PanelData, top: int = 10) -> Table:
    """The `top` writings with the widest spread of the judges' roots, the leaf they differ on most, and each
    judge's score and reason for that leaf side by side."""
    roots = data.measure(ROOT)
    counted = np.isfinite(roots).sum(axis=0) >= 2
    spread = np.where(counted, np.nanmax(np.where(np.isfinite(roots), roots, -np.inf), axis=0)
                      - np.nanmin(np.where(np.isfinite(roots), roots, np.inf), axis=0), -1.0)
    order = [k for k in np.argsort(-spread, kind="stable") if spread[k] >= 0][:top]
    columns = ["task", "item", "model", "root spread", *(f"root {n}" for n in data.judges), "leaf",
               *(f"{n}: score and reason" for n in data.judges)]
    table = Table(f"Writings the panel's judges disagree on most (top {top} by root spread)", columns, digits=2)
    for k in order:
        j = data.judgments[k]
        leaf = _widest_leaf(data, int(k))
        members = j.panel.members if j.panel else {}
        table.add_row(TASK_NAMES[j.task], j.item_id, j.model, float(spread[k]),
                      *(float(roots[i, k]) if np.isfinite(roots[i, k]) else None for i in range(len(data.judges))),
                      leaf or "-", *(_reason(members.get(n), leaf) if leaf else "-" for n in data.judges))
    return table


def _widest_leaf(data: PanelData, writing: int) -> str | None:
    best, width = None, -1.0
    for leaf in data.leaves:
        values = data.measure(leaf)[:, writing]
        values = values[np.isfinite(values)]
        if values.size >= 2 and float(np.ptp(values)) > width:
            best, width = leaf, float(np.ptp(values))
    return best
