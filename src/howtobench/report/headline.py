"""The answer first: one line per judged model, the last thing a judging command prints.

    my-model (under test): All 5.72 [5.21, 6.26] · n=24 items · judge gpt-4o · rank 4 of 11, the paper's 10
    re-judged · vs X: +0.21 [−0.42, +0.87] on 24 shared

The mean and interval are the leaderboard's All cell (no interval for a single item; with --calibration the
calibrated All follows, "5.10 [4.80, 5.40] calibrated to JUDGE on N anchors"); n counts the items the mean rests
on (failed judgments are said beside it, never scored); the comparison is the paired difference on shared items
against the baseline, else against the model ranked next to it.

The rank is among the comparable rows only, each model once: every judged column, and the paper's published
columns only where they are comparable (same judge, whole benchmark: `Leaderboard.paper_caveat` is None) and the
model was not re-judged here (`run --release`: its re-judged column replaces its published one, which stays in the
table, labelled). The model(s) under test (`Leaderboard.under_test`) come last and are marked, so on a screen of
eleven lines the answer is the bottom one.
"""

from __future__ import annotations

from collections.abc import Sequence

from howtobench.data.paper import ALL_ROW
from howtobench.report.leaderboard import SCORE, Leaderboard
from howtobench.stats import PairedResult

MINUS = "\u2212"
SEP = " · "


def signed(x: float, digits: int = 2) -> str:
    """+0.21 / −0.42: a difference with its sign, the minus a real minus sign."""
    return f"{x:+.{digits}f}".replace("-", MINUS)


def signed_interval(low: float | None, high: float | None, digits: int = 2) -> str:
    """" [−0.42, +0.87]": a difference's interval, signed; empty when there is none."""
    return f" [{signed(low, digits)}, {signed(high, digits)}]" if low is not None and high is not None else ""


def _score(lb: Leaderboard, column: str) -> list[str]:
    cell = lb.cell(SCORE, ALL_ROW, column)
    counts = lb.counts[column]
    d = lb.digits(column)
    failed = f"{counts.failed} failed" if counts.failed else ""
    if cell is None or cell.mean is None:
        return [f"All: no score ({counts.failed} of {counts.judged} judgments failed)"]
    interval = f" [{cell.ci_low:.{d}f}, {cell.ci_high:.{d}f}]" if cell.ci_low is not None and cell.ci_high is not None \
        else ""
    items = f"n={cell.n} item" + ("s" if cell.n != 1 else "")
    return [f"All {cell.mean:.{d}f}{interval}", items, *([failed] if failed else [])]


def _calibrated(lb: Leaderboard, column: str) -> list[str]:
    """With --calibration: the All in the reference judge's units, with its interval (report.calibrated)."""
    cell = lb.cell("calibrated", ALL_ROW, column)
    if lb.calibration is None or cell is None or cell.mean is None:
        return []
    interval = f" [{cell.ci_low:.2f}, {cell.ci_high:.2f}]" if cell.ci_low is not None and cell.ci_high is not None \
        else ""
    return [f"{cell.mean:.2f}{interval} {lb.calibration}"]


UNDER_TEST = " (under test)"


def comparable(lb: Leaderboard) -> list[tuple[str, str]]:
    """The rows a rank counts, in the table's order: ours, and the paper's that are comparable and not re-judged."""
    return [(source, name) for source, name in lb.shown
            if source == "ours" or (lb.paper_caveat is None and name not in lb.columns)]


def _rank(lb: Leaderboard, column: str) -> str:
    rows = comparable(lb)
    text = f"rank {rows.index(('ours', column)) + 1} of {len(rows)}"
    if lb.paper is None:
        return text
    rejudged = [m for m in lb.paper.models if m in lb.columns]
    published = sum(1 for source, _ in rows if source == "paper")
    if rejudged:
        n = len(rejudged)
        text += f", the paper's {n} re-judged" if n == len(lb.paper.models) else f", {n} of the paper's re-judged"
        return text + (f", {published} as published" if published else "")
    return text + (f" with the paper's {published}" if published else f" (the paper's {len(lb.paper.models)} "
                                                                       "not comparable)")


def _versus(p: PairedResult | None, d: int) -> list[str]:
    if p is None:
        return []
    if p.mean_diff is None:
        return [f"vs {p.second}: no shared item"]
    return [f"vs {p.second}: {signed(p.mean_diff, d)}{signed_interval(p.ci_low, p.ci_high, d)} on {p.n_shared} shared"]


def headline(lb: Leaderboard, column: str) -> str:
    """One column's line: All with interval and n, who judged it, its rank, and its paired comparison."""
    judge = lb.column_judges.get(column, "an unrecorded judge")
    who = judge if judge.startswith("metric ") else f"judge {judge}"
    parts = [*_score(lb, column), *_calibrated(lb, column), who, _rank(lb, column),
             *_versus(lb.versus.get(column), lb.digits(column))]
    mark = UNDER_TEST if column in lb.under_test and len(lb.columns) > 1 else ""
    return f"{column}{mark}: " + SEP.join(parts)


def closing_order(lb: Leaderboard) -> list[str]:
    """The columns in the order of their closing lines: the table's order, the model(s) under test moved last."""
    return [c for c in lb.columns if c not in lb.under_test] + list(lb.under_test)


def headlines(lb: Leaderboard, columns: Sequence[str] | None = None) -> list[str]:
    """The closing lines of a judging command: one per judged column (all of them unless `columns` says), the
    model(s) under test last."""
    return [headline(lb, col) for col in (columns if columns is not None else closing_order(lb))]
