"""The report's length-control section: raw and controlled scores side by side, the fits, and a plot per task of
score against length ratio per model (binned means, drawn by the template as SVG from these coordinates)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from howtobench.report.leaderboard import SCORE, Leaderboard
from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED, LengthControl
from howtobench.report.length_render import TASK_LABELS, fits_grid, slopes_grid, slopes_line, support_line
from howtobench.report.render import EXTRAPOLATED, fmt

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
WIDTH, HEIGHT, PAD = 520.0, 260.0, 36.0
BINS = 8


@dataclass(frozen=True)
class Series:
    label: str
    colour: str
    points: str
    """SVG polyline points, "x,y x,y ..." in the plot's pixel space."""


@dataclass(frozen=True)
class Plot:
    title: str
    series: list[Series]
    zero_x: float | None
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]


@dataclass(frozen=True)
class LengthView:
    header: list[str]
    body: list[list[str]]
    fits_header: list[str]
    fits_body: list[list[str]]
    plots: list[Plot]
    support_note: str | None = None
    slopes_note: str = ""
    slopes_header: list[str] | None = None
    slopes_body: list[list[str]] | None = None
    width: float = WIDTH
    height: float = HEIGHT


def _side_by_side(lb: Leaderboard) -> tuple[list[str], list[list[str]]]:
    rows = [r for r in lb.rows if r.group in ("task", "all")]
    kinds = (("raw", SCORE), ("item-adjusted", ITEM_ADJUSTED), ("controlled", LENGTH_CONTROLLED))
    header = ["model", *(f"{r.label} {kind}" for r in rows for kind, _ in kinds)]
    body = []
    for col in lb.columns:
        line = [col]
        for r in rows:
            for _, metric in kinds:
                cell = lb.cell(metric, r.key, col)
                line.append(fmt(cell.mean if cell else None) + (EXTRAPOLATED if cell and cell.out_of_support else ""))
        body.append(line)
    return header, body


def _binned(x: np.ndarray, y: np.ndarray, edges: np.ndarray) -> list[tuple[float, float]]:
    which = np.clip(np.digitize(x, edges[1:-1]), 0, len(edges) - 2)
    return [(float(x[which == b].mean()), float(y[which == b].mean())) for b in range(len(edges) - 1)
            if (which == b).any()]


def _plot(lc: LengthControl, task: str, columns: tuple[str, ...]) -> Plot | None:
    series = {c: lc.points[(task, c)] for c in columns if (task, c) in lc.points}
    if not series:
        return None
    xs = np.concatenate([p[0] for p in series.values()])
    edges = np.quantile(xs, np.linspace(0, 1, BINS + 1))
    means = {c: _binned(x, y, edges) for c, (x, y) in series.items()}
    x_lo, x_hi = float(xs.min()), float(xs.max())
    ys = [v for pts in means.values() for _, v in pts]
    y_lo, y_hi = min(ys), max(ys)
    x_span, y_span = (x_hi - x_lo) or 1.0, (y_hi - y_lo) or 1.0

    def px(v: float) -> float:
        return PAD + (v - x_lo) / x_span * (WIDTH - 2 * PAD)

    def py(v: float) -> float:
        return HEIGHT - PAD - (v - y_lo) / y_span * (HEIGHT - 2 * PAD)

    drawn = [Series(c, PALETTE[k % len(PALETTE)], " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in pts))
             for k, (c, pts) in enumerate(means.items())]
    x_ticks = [(px(v), f"×{np.exp(v):.2g}") for v in np.linspace(x_lo, x_hi, 5)]
    y_ticks = [(py(v), f"{v:.2f}") for v in np.linspace(y_lo, y_hi, 4)]
    return Plot(f"{TASK_LABELS.get(task, task)}: root score against writing length / reference length (binned means)",
                drawn, px(0.0) if x_lo <= 0 <= x_hi else None, x_ticks, y_ticks)


def length_view(lb: Leaderboard) -> LengthView | None:
    """The section's records; None without --length-control."""
    lc = lb.length_control
    if lc is None:
        return None
    plots = [p for task in TASK_LABELS if (p := _plot(lc, task, lb.columns)) is not None]
    per_model = slopes_grid(lc)
    return LengthView(*_side_by_side(lb), *fits_grid(lc), plots, support_line(lc), slopes_line(lc),
                      per_model[0] if per_model else None, per_model[1] if per_model else None)
