"""A `Leaderboard` as a `report.tables.Document`: one Table per grid (each metric, the length fits, the counts, the
paired comparisons) between the lines around them, which every output format (report.formats) renders.

All grids take their numbers from `cell_records` (rounded once to 4 decimals) and format those with `fmt`, so a
value printed in the Markdown table is exactly the JSON value to 2 decimals. CSV is the document's long form, the
cells (one line per metric × row × column, paper reference lines marked `source=paper`); the JSON is the
leaderboard's own document (`to_json_data`, a shape scripts read, kept apart from the tables' records); the
counts, paired tests and warnings are in the JSON and the tables.
"""

from __future__ import annotations

from typing import Any

from howtobench.calibration.labels import calibrated_title
from howtobench.judges.base import EMPTY_TREATMENT
from howtobench.report.headline import headlines
from howtobench.report.leaderboard import SCORE, Cell, Leaderboard
from howtobench.report.length_render import (
    controlled_title,
    fits_grid,
    fits_json,
    slopes_grid,
    slopes_line,
    support_grid,
    support_line,
)
from howtobench.report.tables import Block, Document, Paragraph, Table, Turn, render
from howtobench.stats import PairedResult

DASH = "—"
CSV_FIELDS = (
    "metric",
    "group",
    "row",
    "column",
    "model",
    "method",
    "source",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "n_failed",
    "n_weights_repaired",
    "rank",
    "order",
    "n_empty",
    "empty",
    "out_of_support",
)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def fmt(x: float | None, digits: int = 2) -> str:
    return DASH if x is None else f"{x:.{digits}f}"


def metric_title(lb: Leaderboard, metric: str) -> str:
    what = "root score" if metric == SCORE else (controlled_title(metric) or calibrated_title(metric, lb.calibration)
                                                 or f"node: {metric}")
    return f"{lb.title} — {what} ({'+'.join(lb.methods)})"


def _paper_label(lb: Leaderboard, model: str) -> str:
    """A reference column: the release's model name, the method when methods are mixed, the paper's judge, and
    "not comparable" when the table's items or judge are not the paper's (`Leaderboard.paper_caveat`)."""
    assert lb.paper is not None
    method = " [tow]" if len(lb.methods) > 1 else ""
    caveat = ", not comparable" if lb.paper_caveat else ""
    return f"{model}{method} (paper, {lb.paper.judge} judge{caveat})"


def shown_labels(lb: Leaderboard) -> list[str]:
    """The header of every column printed, in the leaderboard's order (the paper's placed among ours)."""
    return [col if source == "ours" else _paper_label(lb, col) for source, col in lb.shown]


def cell_records(lb: Leaderboard) -> list[dict[str, Any]]:
    """The long form every view shares: our cells, then the paper's reference values (root score only)."""
    out: list[dict[str, Any]] = []
    for metric in lb.metrics:
        for row in lb.rows:
            for col in lb.columns:
                cell = lb.cell(metric, row.key, col)
                if cell is None:
                    continue
                counts = lb.counts[col]
                rec = _record(metric, row.group, row.key, col, counts.model, counts.method, "ours", cell)
                rank = None if cell.out_of_support else lb.rank(col)  # an extrapolation is not ranked
                out.append(rec | {"rank": rank, "order": _order_name(lb), "empty": lb.empty})
    if lb.paper is not None:
        for row in lb.rows:
            for model in lb.paper.models:
                value = lb.paper.get(row.key, model)
                if value is not None:
                    paper_cell = Cell(mean=value, ci_low=None, ci_high=None, n=0, n_failed=0)
                    label = _paper_label(lb, model)
                    rec = _record(SCORE, row.group, row.key, label, model, "tow", "paper", paper_cell)
                    out.append(rec | {"rank": lb.shown.index(("paper", model)) + 1, "order": _order_name(lb)})
    return out


def _order_name(lb: Leaderboard) -> str:
    """The order in one token for the CSV/JSON cell records: 'means' or 'shared-<items>'."""
    return lb.order if lb.order_items is None else f"shared-{lb.order_items}"


def _record(
    metric: str, group: str, row: str, column: str, model: str, method: str, source: str, cell: Cell
) -> dict[str, Any]:
    return {
        "metric": metric,
        "group": group,
        "row": row,
        "column": column,
        "model": model,
        "method": method,
        "source": source,
        "mean": _r(cell.mean),
        "ci_low": _r(cell.ci_low),
        "ci_high": _r(cell.ci_high),
        "n": cell.n if source == "ours" else None,
        "n_failed": cell.n_failed if source == "ours" else None,
        "n_weights_repaired": cell.n_weights_repaired if source == "ours" else None,
        "rank": None,
        "order": None,
        "n_empty": cell.n_empty if source == "ours" else None,
        "empty": None,
        "out_of_support": cell.out_of_support if source == "ours" else None,
    }


def _cell_text(rec: dict[str, Any] | None, digits: int = 2) -> str:
    """A cell as printed: mean, 95% interval and the items it rests on ("6.50 [5.50, 7.50] n=4"); a cell of one
    item has no interval ("3.38 n=1"); the paper's values stand alone (its n is the whole benchmark)."""
    if rec is None:
        return DASH
    if rec["mean"] is None:
        return f"failed ×{rec['n_failed']}" if rec["n_failed"] else DASH
    n = f" n={rec['n']}" if rec["n"] is not None else ""
    mean = fmt(rec["mean"], digits) + (EXTRAPOLATED if rec.get("out_of_support") else "")
    if rec["ci_low"] is None:
        return mean + n
    return f"{mean} [{fmt(rec['ci_low'], digits)}, {fmt(rec['ci_high'], digits)}]{n}"


EXTRAPOLATED = "†"
"""The mark of a length-controlled value that extrapolates (report.length_control.SUPPORT_SHARE)."""


def grid(lb: Leaderboard, metric: str) -> tuple[list[str], list[list[str]]]:
    """Header and body of one metric's table (rows × columns), shared by Markdown and rich: the paper's reference
    columns (root score only) where the order places them."""
    recs = {(r["row"], r["column"]): r for r in cell_records(lb) if r["metric"] == metric}
    columns = shown_labels(lb) if metric == SCORE else list(lb.columns)
    header = ["", *columns]
    body = [[row.label, *(_cell_text(recs.get((row.key, c)), lb.digits(c)) for c in columns)] for row in lb.rows]
    return header, body


def counts_grid(lb: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """Judged / scored / failed / empty / truncated / renormalised writings and judgments on repaired weights per column
    (method shown when several are mixed)."""
    with_missing = any(c.missing is not None for c in lb.counts.values())
    with_method = len(lb.methods) > 1
    empty = f"empty ({EMPTY_TREATMENT[lb.empty]})"
    header = ["model", *(["method"] if with_method else []), "judged", "scored", "failed", empty, "truncated"]
    header += ["renorm."]
    header += ["failed %", "weights repaired", *(["missing"] if with_missing else [])]
    body = []
    for c in lb.counts.values():
        line = [c.column, *([c.method] if with_method else [])]
        line += [str(n) for n in (c.judged, c.scored, c.failed, c.empty, c.truncated, c.renormalized)]
        line += [f"{c.failure_rate:.1%}", str(c.weights_repaired)]
        line += [str(c.missing)] if with_missing else []
        body.append(line)
    return header, body


def order_line(lb: Leaderboard) -> str:
    return f"Models ordered by: {lb.order_label}."


def paper_lines(lb: Leaderboard) -> list[str]:
    """What the reference columns are, and when they are not comparable (or not shown), why — one line each."""
    if lb.paper_hidden:
        return [lb.paper_hidden[0].upper() + lb.paper_hidden[1:] + "."]
    if lb.paper is None:
        return []
    lines = [f"Reference columns: {lb.paper.source}."]
    if lb.paper_caveat:
        lines.append(f"Reference columns {lb.paper_caveat}.")
    return lines


def _difference(p: PairedResult, digits: int = 2, ci_digits: int = 2) -> str:
    diff = DASH if p.mean_diff is None else f"{p.mean_diff:+.{digits}f}"
    if p.ci_low is not None and p.ci_high is not None:
        diff += f" [{p.ci_low:+.{ci_digits}f}, {p.ci_high:+.{ci_digits}f}]"
    return diff


def _p_text(p: PairedResult) -> str:
    return DASH if p.p_wilcoxon is None else f"{p.p_wilcoxon:.3g}"


SIGN_COLUMN = "sign on shared items"
"""The paired table's last column: only the direction of the shared-item difference against the order, worded so
it cannot read as a significance test (that is the interval and p beside it)."""


def paired_grid(lb: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """Adjacent pairs; the last column says whether the shared items put the pair in the same order (flagged if not)."""
    header = ["pair (adjacent in the order)", "shared items", "difference [95% CI]", "Wilcoxon p", SIGN_COLUMN]
    body = []
    for p in lb.paired:
        sign = DASH if p.mean_diff is None else "REVERSED" if p.against_order else "same as the order"
        digits = lb.digits(p.first)
        body.append([f"{p.first} vs {p.second}", str(p.n_shared), _difference(p, 4 if p.against_order else digits,
                                                                                digits), _p_text(p), sign])
    return header, body


def comparisons_grid(lb: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """The pairs asked for (--compare, --baseline): first − second on the items both have a score for."""
    header = ["first − second", "shared items", "difference [95% CI]", "Wilcoxon p"]
    return header, [[f"{p.first} − {p.second}", str(p.n_shared), _difference(p, lb.digits(p.first), lb.digits(p.first)),
                     _p_text(p)] for p in lb.comparisons]


def comparisons_title(lb: Leaderboard) -> str:
    what = f"every model against {lb.baseline}" if lb.baseline else "the pair asked for"
    return f"Paired on shared items: {what}"


def to_json_data(lb: Leaderboard) -> dict[str, Any]:
    return {
        "title": lb.title,
        "notes": list(lb.notes),
        "signature": lb.signature,
        "methods": list(lb.methods),
        "judge_models": list(lb.judge_models),
        "seed": lb.seed,
        "bootstrap": lb.n_boot,
        "columns": list(lb.columns),
        "shown": [{"source": source, "column": col} for source, col in lb.shown],
        "headline": headlines(lb),
        "rows": [{"group": r.group, "key": r.key, "label": r.label} for r in lb.rows],
        "metrics": list(lb.metrics),
        "cells": cell_records(lb),
        "counts": [vars(c) | {"failure_rate": round(c.failure_rate, 4)} for c in lb.counts.values()],
        "paired": [_pair_data(p) | {"against_order": p.against_order} for p in lb.paired],
        "comparisons": [_pair_data(p) for p in lb.comparisons],
        "baseline": lb.baseline,
        "empty": {"convention": lb.empty, "treatment": EMPTY_TREATMENT[lb.empty],
                  "writings": sum(c.empty for c in lb.counts.values()), "label": lb.empty_label},
        "order": {"by": lb.order, "label": lb.order_label, "items": lb.order_items,
                  "scores": {c: _r(v) for c, v in lb.order_scores.items()}},
        "warnings": list(lb.warnings),
        "length_control": fits_json(lb.length_control) if lb.length_control is not None else None,
        "calibration": lb.calibration,
        "paper_source": lb.paper.source if lb.paper else None,
        "paper_comparable": None if lb.paper is None else lb.paper_caveat is None,
        "paper_caveat": lb.paper_caveat,
        "paper_hidden": lb.paper_hidden,
    }


def _pair_data(p: PairedResult) -> dict[str, Any]:
    return {"first": p.first, "second": p.second, "n_shared": p.n_shared, "mean_diff": _r(p.mean_diff),
            "ci_low": _r(p.ci_low), "ci_high": _r(p.ci_high), "p_wilcoxon": p.p_wilcoxon}


MODELS_AS_ROWS = Turn(label="models as rows", corner="model", labels=1)
"""A grid whose columns are models: models as rows when they do not fit as columns (report.fit)."""
PAPER_MARK = "(paper,"
"""In the terminal, the paper's reference columns and values are dim: their labels hold this."""


def _board_table(title: str, grid: tuple[list[str], list[list[str]]], labels: int = 1, turn: bool = False) -> Table:
    """A grid in the leaderboard's look; never turned (its rows already are the models or pairs) unless `turn`."""
    header, body = grid
    return Table(title, header, body, turn=MODELS_AS_ROWS if turn else Turn(label=None, labels=labels),
                 look="board", dim_marker=PAPER_MARK)


def counts_table(lb: Leaderboard) -> Table:
    """The counts per column (`counts_grid`) as the leaderboard and the HTML report show them."""
    return _board_table("Judged writings per model", counts_grid(lb), labels=2 if len(lb.methods) > 1 else 1)


def paired_table(lb: Leaderboard) -> Table:
    """The adjacent pairs (`paired_grid`) as the leaderboard and the HTML report show them."""
    return _board_table("Adjacent models, paired on shared items", paired_grid(lb))


def board_blocks(lb: Leaderboard) -> list[Block]:
    """The tables and lines of the leaderboard, in order."""
    blocks: list[Block] = [_board_table(metric_title(lb, m), grid(lb, m), turn=True) for m in lb.metrics]
    blocks.append(Paragraph([order_line(lb), lb.empty_label + "."]))
    if lb.length_control is not None:
        blocks.append(_board_table("Length model fits", fits_grid(lb.length_control), labels=2))
        blocks.append(Paragraph([slopes_line(lb.length_control)]))
        if (per_model := slopes_grid(lb.length_control)) is not None:
            blocks.append(_board_table("Per-model length slopes (root score, shrunk toward the pooled slope)",
                                       per_model, labels=2))
        blocks.append(_board_table("Writings outside the length support (ln ratio range of the others' central 95%)",
                                   support_grid(lb.length_control)))
        if (line := support_line(lb.length_control)) is not None:
            blocks.append(Paragraph([line]))
    blocks.append(counts_table(lb))
    if lb.paired:
        blocks.append(paired_table(lb))
    if lb.comparisons:
        blocks.append(_board_table(comparisons_title(lb), comparisons_grid(lb)))
    return blocks


def long_form(lb: Leaderboard) -> Table:
    """The cell records as one table of raw values (None blank): the leaderboard's CSV."""
    records = cell_records(lb)
    return Table("cells", list(CSV_FIELDS), [[rec[k] for k in CSV_FIELDS] for rec in records], digits=None)


def board_document(lb: Leaderboard, *, headline: bool = True) -> Document:
    """The document every format renders; without the headline lines when a command prints them itself after
    lines of its own (`headline=False`, `run`)."""
    paper = paper_lines(lb)
    return Document(
        board_blocks(lb),
        title=lb.title,
        notes=list(lb.notes),
        headline=headlines(lb) if headline else [],
        warnings=list(lb.warnings),
        footer=[Paragraph(paper), Paragraph([lb.signature], code=True)],
        long_form=long_form(lb),
        data=to_json_data(lb),
    )


def board_text(lb: Leaderboard, format_name: str) -> str:
    """The leaderboard in output format `format_name`, as `-o` and a run's leaderboard.md / .json / .csv hold it."""
    return render(board_document(lb), format_name)
