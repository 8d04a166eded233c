"""Table 7's shape, computed purely from judgments: initial score, then the change under each perturbation.

Rows are methods (and, for tree judges, each node of the tree, e.g. `tow:content`); columns are
the initial mean score, then one cell per perturbation kind. A cell pairs every perturbed judgment
with the judgment of the writing it came from (model `<source>+<kind>` -> `<source>`, same item)
and reports the mean of (perturbed − original) over the pairs where both have a score, with a
seeded percentile-bootstrap 95% interval. Failed or missing judgments never enter a mean; they
are counted in `missing`. Writings the perturbation left unchanged (e.g. `drop` on a one-sentence
text, `strip-headings` on a text without headings) test nothing: when the caller names them in
`unchanged` they are left out and counted in `unchanged`. A perturbation that left nothing (an empty
writing, status `empty`) is left out by default and counted in `empty` (`empty="exclude"`, the authors'
convention: their pipeline judges no empty writing); `empty="lowest"` pairs it with the judge's lowest score.

What is flagged (the paper's "undesired changes"):
- a damaging perturbation (every kind but `reference`) whose mean change is above zero: the judge
  rewarded the damage (`▲`; `▲*` when the whole interval is above zero);
- a damaging perturbation that changed no score at all (`○`): the judge is blind to it;
- the `reference` control, whose cell shows the mean ABSOLUTE score of the human reference, when
  the row has a known reference anchor (ToW 6; BLEU-1 and sacreBLEU 100; ROUGE-L 1) that lies
  outside the 95% interval of that mean (`≠`). Rows without an anchor are not flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

import numpy as np

from howtobench.document import Table
from howtobench.judges.base import EMPTY_TREATMENT, EmptyConvention, Judgment, counted_score, left_out_as_empty
from howtobench.report.headline import SEP, signed, signed_interval
from howtobench.robustness.apply import expectation
from howtobench.stats import bootstrap_ci, rng_for

ORIGINAL = "original"
REFERENCE_ANCHORS: dict[str, float] = {"tow": 6.0, "bleu": 100.0, "sacrebleu": 100.0, "rouge": 1.0}
ANCHOR_TOLERANCE = 1e-6  # relative: rouge-chinese's smoothed F1 of a text with itself is 0.999999995


@dataclass(frozen=True)
class Cell:
    """One (row, perturbation) cell."""

    kind: str
    n: int
    missing: int
    unchanged: int
    mean_delta: float | None
    ci: tuple[float, float] | None
    mean_score: float | None = None
    score_ci: tuple[float, float] | None = None
    flag: str = ""
    empty: int = 0
    """Pairs with an empty writing on either side: left out ("exclude") or in `n` with the lowest score."""

    @property
    def flagged(self) -> bool:
        return bool(self.flag)


@dataclass(frozen=True)
class Row:
    """One method, or one node of a method's tree."""

    label: str
    method: str
    node: str | None
    initial: float | None
    n_initial: int
    cells: dict[str, Cell] = field(default_factory=dict)
    n_empty: int = 0
    """Empty original writings (left out of `initial` under "exclude")."""


@dataclass(frozen=True)
class RobustnessTable:
    kinds: tuple[str, ...]
    rows: tuple[Row, ...]
    seed: int
    n_boot: int
    empty: EmptyConvention = "exclude"
    gameability: Table | None = None
    """Raw and length-controlled change under the padding kinds (robustness.gameability); None without them."""


def _value(j: Judgment | None, node: str | None, empty: EmptyConvention) -> float | None:
    return None if j is None else counted_score(j, empty, node)


def source_model(model: str, kind: str) -> str:
    """The model a perturbed writing came from (`gpt-4o+drop` -> `gpt-4o`)."""
    return model.removesuffix(f"+{kind}")


Key = tuple[str, str]


def _pairs(originals: Mapping[Key, Judgment], perturbed: Sequence[Judgment], kind: str, node: str | None,
           unchanged: AbstractSet[Key], empty: EmptyConvention) -> tuple[list[tuple[float, float]], int, int, int]:
    """(before, after) pairs, and how many were missing, unchanged, or had an empty writing."""
    pairs, missing, same, empties = [], 0, 0, 0
    for j in perturbed:
        if (j.item_id, j.model) in unchanged:
            same += 1
            continue
        original = originals.get((j.item_id, source_model(j.model, kind)))
        sides = [x for x in (original, j) if x is not None]
        empties += any(x.status == "empty" for x in sides)
        if any(left_out_as_empty(x, empty) for x in sides):
            continue
        before, after = _value(original, node, empty), _value(j, node, empty)
        if before is None or after is None:
            missing += 1
        else:
            pairs.append((before, after))
    return pairs, missing, same, empties


def _cell(label: str, kind: str, pairs: list[tuple[float, float]], counts: tuple[int, int, int],
          anchor: float | None, seed: int, n_boot: int) -> Cell:
    missing, same, empties = counts
    cell = _scored_cell(label, kind, pairs, (missing, same), anchor, seed, n_boot)
    return replace(cell, empty=empties)


def _scored_cell(label: str, kind: str, pairs: list[tuple[float, float]], counts: tuple[int, int],
                 anchor: float | None, seed: int, n_boot: int) -> Cell:
    missing, same = counts
    if not pairs:
        return Cell(kind, 0, missing, same, None, None)
    before, after = np.array(pairs, dtype=np.float64).T
    deltas = after - before
    ci = bootstrap_ci(deltas, n_boot=n_boot, rng=rng_for(seed, f"{label}|{kind}|delta"))
    mean = float(deltas.mean())
    if expectation(kind) == "down":
        flag = ("▲*" if ci and ci[0] > 0 else "▲") if mean > 0 else "○" if not deltas.any() else ""
        return Cell(kind, len(pairs), missing, same, mean, ci, flag=flag)
    score_ci = bootstrap_ci(after, n_boot=n_boot, rng=rng_for(seed, f"{label}|{kind}|score"))
    tol = ANCHOR_TOLERANCE * max(1.0, abs(anchor or 0.0))
    off = anchor is not None and score_ci is not None and not score_ci[0] - tol <= anchor <= score_ci[1] + tol
    return Cell(kind, len(pairs), missing, same, mean, ci, float(after.mean()), score_ci, "≠" if off else "")


def _nodes(judgments: Sequence[Judgment]) -> list[str]:
    return list(dict.fromkeys(node for j in judgments for node in j.nodes))


def robustness_table(
    judgments: Mapping[str, Mapping[str, Sequence[Judgment]]],
    kinds: Sequence[str],
    *,
    anchors: Mapping[str, float] = REFERENCE_ANCHORS,
    unchanged: AbstractSet[Key] = frozenset(),
    seed: int = 0,
    n_boot: int = 1000,
    empty: EmptyConvention = "exclude",
) -> RobustnessTable:
    """Build the table from judgments[method][set], where set is "original" or a perturbation kind.

    `unchanged` holds the (item id, perturbed model) of writings the perturbation did not change; `empty` says how
    empty writings count (see the module docstring).
    """
    rows: list[Row] = []
    for method, sets in judgments.items():
        originals = {(j.item_id, j.model): j for j in sets.get(ORIGINAL, ())}
        for node in [None, *_nodes(list(originals.values()))]:
            label = method if node is None else f"{method}:{node}"
            initial = [v for j in originals.values() if (v := _value(j, node, empty)) is not None]
            cells = {}
            for kind in kinds:
                pairs, *counts = _pairs(originals, sets.get(kind, ()), kind, node, unchanged, empty)
                cells[kind] = _cell(label, kind, pairs, (counts[0], counts[1], counts[2]), anchors.get(label), seed,
                                    n_boot)
            mean = float(np.mean(initial)) if initial else None
            n_empty = sum(1 for j in originals.values() if j.status == "empty")
            rows.append(Row(label, method, node, mean, len(initial), cells, n_empty))
    return RobustnessTable(tuple(kinds), tuple(rows), seed, n_boot, empty)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _show(cell: Cell, digits: int) -> str:
    if cell.n == 0:
        return "-"
    if cell.mean_score is not None:
        low, high = cell.score_ci or (cell.mean_score, cell.mean_score)
        return f"={cell.mean_score:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]{cell.flag}"
    low, high = cell.ci or (cell.mean_delta or 0.0, cell.mean_delta or 0.0)
    return f"{cell.mean_delta:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]{cell.flag}"


def as_table(table: RobustnessTable, digits: int = 2) -> Table:
    """The display table (shared renderer): Init., then one column per kind."""
    out = Table(title="Robustness (Table 7 shape): initial score, then mean change under each perturbation",
                columns=["method", "init", "n", *table.kinds, f"empty ({EMPTY_TREATMENT[table.empty]})"],
                digits=digits)
    for row in table.rows:
        places = _places(row, digits)
        out.add_row(row.label, _fmt(row.initial, places), row.n_initial,
                    *(_show(row.cells[k], places) for k in table.kinds),
                    row.n_empty + sum(row.cells[k].empty for k in table.kinds))
    out.notes = [
        "Cells: mean(perturbed − original) [95% bootstrap CI] over writings with both scores; "
        f"{table.n_boot} resamples, seed {table.seed}.",
        "▲ the score ROSE under damage (▲* the whole CI is above 0): an undesired change. "
        "○ no score changed at all: the judge is blind to this perturbation.",
        "reference: mean absolute score of the human reference [CI]; ≠ its CI misses the reference anchor "
        "(tow 6, bleu/sacrebleu 100, rouge 1).",
    ]
    first = table.rows[0].cells if table.rows else {}
    out.notes.append(_empty_note(table))
    skipped = [f"{kind} {first[kind].unchanged}" for kind in table.kinds if kind in first and first[kind].unchanged]
    if skipped:
        out.notes.append("Left out because the perturbation did not change the text: " + ", ".join(skipped) + ".")
    return out


def _places(row: Row, digits: int) -> int:
    """Decimals for a row: two more on a 0-1 scale (ROUGE), where two would hide every change."""
    return digits + 2 if row.initial is not None and abs(row.initial) <= 1 else digits


def headlines(table: RobustnessTable, digits: int = 2) -> list[str]:
    """The closing lines of `howtobench robustness`, one per judge method (report.headline's style):

        tow: 1 undesired (repeat ▲) · original 6.12 on 50 writings · drop −0.85 [−1.10, −0.61] · repeat +0.12 [...]

    first whether the judge did anything it should not (the flags of the table), then its original score and the
    change under each perturbation (the reference control: its absolute score), as the table's cells."""
    return [_headline(row, table.kinds, _places(row, digits)) for row in table.rows if row.node is None]


def _headline(row: Row, kinds: Sequence[str], places: int) -> str:
    undesired = [f"{kind} {row.cells[kind].flag}" for kind in kinds if row.cells[kind].flagged]
    verdict = f"{len(undesired)} undesired ({', '.join(undesired)})" if undesired else "no undesired change"
    writings = f"{row.n_initial} writing" + ("s" if row.n_initial != 1 else "")
    original = f"original {_fmt(row.initial, places)} on {writings}"
    return f"{row.label}: " + SEP.join([verdict, original, *(_change(row.cells[kind], places) for kind in kinds)])


def _change(cell: Cell, places: int) -> str:
    if cell.n == 0:
        return f"{cell.kind} no pair scored"
    if cell.mean_score is not None:
        low, high = cell.score_ci or (cell.mean_score, cell.mean_score)
        return f"{cell.kind} ={cell.mean_score:.{places}f} [{low:.{places}f}, {high:.{places}f}]"
    interval = signed_interval(*cell.ci, places) if cell.ci else ""
    return f"{cell.kind} {signed(cell.mean_delta or 0.0, places)}{interval}"


def _empty_note(table: RobustnessTable) -> str:
    """The empty writings of the first method, per set, and what was done with them (always printed)."""
    row = table.rows[0] if table.rows else None
    per_set = [f"original {row.n_empty if row else 0}"]
    per_set += [f"{kind} {row.cells[kind].empty if row else 0}" for kind in table.kinds]
    treatment = EMPTY_TREATMENT[table.empty]
    why = ("the authors' convention: their pipeline judges no empty writing; --empty lowest scores them"
           if table.empty == "exclude" else "the judge's lowest scores")
    return f"Empty writings ({treatment}, --empty {table.empty}: {why}): " + ", ".join(per_set) + "."
