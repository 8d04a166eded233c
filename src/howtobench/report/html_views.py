"""Plain view records the HTML template draws: every number comes from the leaderboard module, formatted once.

The counts and paired tables are the leaderboard document's own Tables (`render.counts_table`, `paired_table`); the
heatmap's cells are read through `render.cell_records` and printed with `render.fmt`, so a value in the
HTML page is the value of `howtobench leaderboard --format markdown` to the digit. What the leaderboard does not
hold (failure rates per leaf, colours, bar lengths) is computed here from the same judgments and cells.
Strings in these records are raw text: the template escapes them (autoescape), nothing here builds HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import SCORE, Leaderboard
from howtobench.report.render import DASH, cell_records, counts_table, fmt, metric_title, paired_table, shown_labels

# Colour stops of the heatmap (light for the lowest mean of the table, deep blue for the highest).
FAILED_BG, FAILED_FG = "#fdecea", "#b42318"
HEAT_STOPS = ((222, 235, 247), (158, 202, 225), (33, 113, 181), (8, 48, 107))


@dataclass(frozen=True)
class CellView:
    """One leaderboard cell as text: the mean, its interval, and how many items it rests on."""

    mean: str
    ci: str
    n: int | None
    n_failed: int
    paper: bool = False

    @property
    def failed_only(self) -> bool:
        return self.mean == DASH and self.n_failed > 0


@dataclass(frozen=True)
class TableView:
    """A metric's leaderboard: our models (`header`), every column in the order printed (`shown`: label, and
    whether it is a paper reference column placed among ours by its published All) and one line per row."""

    metric: str
    title: str
    header: list[str]
    paper_columns: list[str]
    rows: list[tuple[str, str, list[CellView | None]]]
    shown: list[tuple[str, bool]]


def _ci_text(rec: dict[str, Any], digits: int) -> str:
    if rec["ci_low"] is None:
        return ""
    return f"[{fmt(rec['ci_low'], digits)}, {fmt(rec['ci_high'], digits)}]"


def leaderboard_tables(lb: Leaderboard) -> list[TableView]:
    """One table per metric (root score first, then the nodes), rows Table 4 style."""
    records = cell_records(lb)
    out = []
    for metric in lb.metrics:
        recs = {(r["row"], r["column"]): r for r in records if r["metric"] == metric}
        paper = list(dict.fromkeys(r["column"] for r in records if r["source"] == "paper" and r["metric"] == metric))
        columns = shown_labels(lb) if paper else list(lb.columns)
        rows: list[tuple[str, str, list[CellView | None]]] = []
        for row in lb.rows:
            cells: list[CellView | None] = []
            for col in columns:
                rec = recs.get((row.key, col))
                cells.append(None if rec is None else _cell_view(rec, lb.digits(col)))
            rows.append((row.group, row.label, cells))
        shown = [(col, col in paper) for col in columns]
        out.append(TableView(metric, metric_title(lb, metric), list(lb.columns), paper, rows, shown))
    return out


def node_summary(tables: Sequence[TableView]) -> list[tuple[str, list[CellView | None]]]:
    """The All line of every node table, one row per node: the breakdown at a glance."""
    out = []
    for t in tables:
        if t.metric == SCORE:
            continue
        line = next((cells for group, _, cells in t.rows if group == "all"), None)
        if line is not None:
            out.append((t.metric, line[: len(t.header)]))
    return out


def _cell_view(rec: dict[str, Any], digits: int) -> CellView:
    return CellView(
        mean=fmt(rec["mean"], digits),
        ci=_ci_text(rec, digits),
        n=rec["n"],
        n_failed=rec["n_failed"] or 0,
        paper=rec["source"] == "paper",
    )


# ------------------------------------------------------------------ heatmap and bars


@dataclass(frozen=True)
class HeatCell:
    text: str
    background: str
    foreground: str
    title: str


def heat_colour(t: float) -> tuple[str, str]:
    """Background and text colour for a position t in [0, 1] of the table's range."""
    t = min(max(t, 0.0), 1.0)
    span = t * (len(HEAT_STOPS) - 1)
    k = min(int(span), len(HEAT_STOPS) - 2)
    frac = span - k
    lo, hi = HEAT_STOPS[k], HEAT_STOPS[k + 1]
    rgb = tuple(round(a + (b - a) * frac) for a, b in zip(lo, hi, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb), ("#ffffff" if t > 0.55 else "#1b1f24")


def heatmap(lb: Leaderboard) -> tuple[list[str], list[tuple[str, list[HeatCell | None]]]]:
    """Genre × model root-score means, coloured on the table's own min–max range."""
    genres = [row for row in lb.rows if row.group == "genre"]
    ours = [r for r in cell_records(lb) if r["metric"] == SCORE and r["source"] == "ours"]
    means = {(r["row"], r["column"]): r["mean"] for r in ours if r["mean"] is not None}
    failed_only = {(r["row"], r["column"]): r["n_failed"] for r in ours if r["mean"] is None and r["n_failed"]}
    values = [means[(g.key, c)] for g in genres for c in lb.columns if (g.key, c) in means]
    if not values:
        return list(lb.columns), []
    low, high = min(values), max(values)
    body = []
    for g in genres:
        line: list[HeatCell | None] = []
        for col in lb.columns:
            mean = means.get((g.key, col))
            if mean is None:
                n = failed_only.get((g.key, col))
                line.append(HeatCell(f"failed ×{n}", FAILED_BG, FAILED_FG, f"{g.label} · {col}: every judgment failed")
                            if n else None)
                continue
            bg, fg = heat_colour(0.5 if high == low else (mean - low) / (high - low))
            text = fmt(mean, lb.digits(col))
            line.append(HeatCell(text, bg, fg, f"{g.label} · {col}: {text}"))
        body.append((g.label, line))
    return list(lb.columns), body


@dataclass(frozen=True)
class Bar:
    """One horizontal bar of the All chart, lengths in percent of the chart width."""

    label: str
    text: str
    width: float
    ci_low: float | None
    ci_high: float | None
    paper: bool
    mine: bool = False
    """A model under test (`Leaderboard.under_test`): drawn in its own colour, so the eye finds it among eleven."""


def all_bars(lb: Leaderboard) -> list[Bar]:
    """The All row as bars (ours and the paper's reference values, in order), scaled from 0 to the largest bound."""
    recs = sorted((r for r in cell_records(lb) if r["metric"] == SCORE and r["row"] == "all" and r["mean"] is not None),
                  key=lambda r: r["rank"])  # in the leaderboard's order, the paper's columns placed among ours
    if not recs:
        return []
    top = max(max(r["mean"], r["ci_high"] or r["mean"]) for r in recs)
    scale = 100.0 / top if top > 0 else 0.0
    return [
        Bar(
            label=r["column"],
            text=fmt(r["mean"], lb.digits(r["column"])),
            width=max(r["mean"], 0.0) * scale,
            ci_low=None if r["ci_low"] is None else r["ci_low"] * scale,
            ci_high=None if r["ci_high"] is None else r["ci_high"] * scale,
            paper=r["source"] == "paper",
            mine=r["source"] != "paper" and r["column"] in lb.under_test,
        )
        for r in recs
    ]


# ------------------------------------------------------------------ counts, paired tests, leaf failures


@dataclass(frozen=True)
class GridView:
    header: list[str]
    body: list[list[str]]
    flagged: list[bool]


def counts_view(lb: Leaderboard) -> GridView:
    """The leaderboard's own counts table (every format prints the same), rows with failures flagged."""
    table = counts_table(lb)
    flagged = [c.failed > 0 or c.weights_repaired > 0 for c in lb.counts.values()]
    return GridView(table.columns, table.display_rows(), flagged)


def paired_view(lb: Leaderboard) -> GridView:
    """The leaderboard's own paired table, pairs against the order flagged."""
    table = paired_table(lb)
    return GridView(table.columns, table.display_rows(), [p.against_order for p in lb.paired])


@dataclass(frozen=True)
class LeafFailureView:
    """Failure counts per (node, leaf) and column; `rates[i][j]` is None where the column never had the leaf."""

    columns: list[str]
    leaves: list[tuple[str, str]]
    cells: list[list[tuple[str, bool] | None]]


def column_of(lb: Leaderboard) -> dict[tuple[str, str], str]:
    """(model, method) → leaderboard column name, as the leaderboard itself named them."""
    return {(c.model, c.method): c.column for c in lb.counts.values()}


def latest_judgments(judgments: Sequence[Judgment]) -> dict[tuple[str, str, str, str], Judgment]:
    """The last judgment per (method, model, task, item) — the one the leaderboard counted."""
    return {(j.method, j.model, j.task, j.item_id): j for j in judgments}


def leaf_failures(lb: Leaderboard, judgments: Sequence[Judgment]) -> LeafFailureView | None:
    """Share of failed leaves per leaf and column; None when no judgment has leaves (e.g. ROUGE)."""
    columns = column_of(lb)
    tally: dict[tuple[str, str], dict[str, list[int]]] = {}
    for j in latest_judgments(judgments).values():
        col = columns.get((j.model, j.method))
        for leaf in j.leaves if col else ():
            counts = tally.setdefault((leaf.node or "", leaf.name), {}).setdefault(col or "", [0, 0])
            counts[0] += leaf.status == "failed"
            counts[1] += 1
    if not tally:
        return None
    leaves = sorted(tally, key=_leaf_order)
    cells = []
    for key in leaves:
        line: list[tuple[str, bool] | None] = []
        for col in lb.columns:
            got = tally[key].get(col)
            line.append(None if got is None else (f"{got[0]}/{got[1]} ({got[0] / got[1]:.0%})", got[0] > 0))
        cells.append(line)
    return LeafFailureView(list(lb.columns), leaves, cells)


def _leaf_order(key: tuple[str, str]) -> tuple[int, str, str]:
    order = {"content": 0, "format": 1, "impression": 2}
    return (order.get(key[0], 3), key[0], key[1])
