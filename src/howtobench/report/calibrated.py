"""A leaderboard's cells in the reference judge's units: `calibrated` (root) and `calibrated:NODE` metrics beside the
raw ones, labelled with the calibration, its uncertainty in every interval.

An anchors calibration maps each writing's score (`calibration.apply`: its task's map, joint bootstrap over items
and anchors); a paper calibration places each task row's and All's raw mean on the paper's scale by that scope's
line with its prediction interval (`calibration.paper.place`; genre rows have no line, so no calibrated cell).
Judgments the calibration was not fitted for are refused in one line (`record.check_matches`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from howtobench.calibration.apply import Mapper, mean_estimate
from howtobench.calibration.labels import CALIBRATED, calibrated_metric
from howtobench.calibration.paper import place
from howtobench.calibration.record import ROOT, Calibration, check_matches, load_calibration
from howtobench.data.models import Item
from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import (
    SCORE,
    Cell,
    Leaderboard,
    LeaderboardOptions,
    Row,
    _dedupe,
    _Matrix,
    _matrix,
    _node_metrics,
    _row_mask,
    build_leaderboard,
)
from howtobench.stats import rng_for

CellMap = dict[tuple[str, str, str], Cell]
Z95 = 1.959963984540054


def _anchor_cells(cal: Calibration, mx: _Matrix, rows: Sequence[Row], raw: CellMap, seed: int,
                  n_boot: int) -> tuple[CellMap, list[str]]:
    mapper = Mapper(cal, n_boot=n_boot)
    cells: CellMap = {}
    outside: dict[str, int] = {}
    for metric, values in mx.values.items():
        node = ROOT if metric == SCORE else metric
        if not mapper.has(node):
            continue
        for c, col in enumerate(mx.columns):
            mapped = mapper.map(node, mx.tasks, values[c])
            for row in rows:
                est = mean_estimate(mapped, _row_mask(mx, row), rng_for(seed, f"{CALIBRATED}|{metric}|{row.key}|{col}"))
                if est is None:
                    continue
                base = raw.get((metric, row.key, col))
                cells[(calibrated_metric(metric), row.key, col)] = Cell(
                    mean=est.mean, ci_low=est.ci_low, ci_high=est.ci_high, n=est.n,
                    n_failed=base.n_failed if base else 0, n_weights_repaired=base.n_weights_repaired if base else 0,
                    n_empty=base.n_empty if base else 0)
                if row.group == "all" and metric == SCORE:
                    outside[col] = est.n_outside
    warnings = [f"{col}: {n} scores lie outside the calibration anchors' range and were mapped to its end values "
                "(extrapolated: the map says nothing beyond its anchors)" for col, n in outside.items() if n]
    return cells, warnings


def _paper_cells(cal: Calibration, columns: Sequence[str], rows: Sequence[Row], raw: CellMap
                 ) -> tuple[CellMap, list[str]]:
    cells: CellMap = {}
    warnings = []
    for row in rows:
        line = cal.line_for(row.key)
        if line is None:
            continue
        for col in columns:
            base = raw.get((SCORE, row.key, col))
            if base is None or base.mean is None:
                continue
            se = (base.ci_high - base.ci_low) / (2 * Z95) if base.ci_low is not None and base.ci_high is not None \
                else 0.0
            placed = place(line, base.mean, se)
            cells[(CALIBRATED, row.key, col)] = replace(base, mean=placed.value, ci_low=placed.low,
                                                        ci_high=placed.high)
            if placed.extrapolated:
                warnings.append(f"{col} ({row.label}): its mean {base.mean:.2f} lies outside the paper models' range "
                                f"under this judge [{line.x_min:.2f}, {line.x_max:.2f}]: the line is extrapolated")
    refused = [ln.scope for ln in cal.lines if ln.refused]
    if refused:
        warnings.append(f"no calibrated cells for {', '.join(refused)}: this judge's order of the paper's models there "
                        "is not significantly the paper's (the calibration refused those lines)")
    return cells, warnings


def calibrated_cells(cal: Calibration, judgments: Sequence[Judgment], mx: _Matrix, rows: Sequence[Row],
                     raw: CellMap, *, seed: int, n_boot: int, source: Path | str) -> tuple[CellMap, list[str]]:
    """The calibrated cells of a leaderboard (its per-item matrix `mx`, its `rows` and raw cells) and the warnings
    they need; judgments the calibration was not fitted for are refused in one line."""
    check_matches(cal, judgments, source)
    if cal.kind == "paper":
        return _paper_cells(cal, mx.columns, rows, raw)
    return _anchor_cells(cal, mx, rows, raw, seed, n_boot)


def calibration_note(cal: Calibration) -> str:
    return f"Calibrated cells: {cal.label}; the calibration's uncertainty is carried into their intervals."


def with_calibration(lb: Leaderboard, judgments: Sequence[Judgment], cal: Calibration, source: Path | str,
                     items: Sequence[Item] | None = None) -> Leaderboard:
    """`lb` (built from `judgments` with the same `items`) with its calibrated cells, metrics, note and warnings.

    The per-item matrix is rebuilt here from the judgments as `build_leaderboard` builds it (the same dedupe, genres
    and empty convention), so the leaderboard's own code needs no knowledge of calibrations."""
    latest, _ = _dedupe(judgments, multi=len(lb.methods) > 1)
    metrics = [m for m in lb.metrics if m == SCORE or m in _node_metrics(latest.values())]
    genre_of = {i.id: i.genre for i in items} if items is not None else {}
    mx = _matrix(latest, metrics, genre_of, lb.empty)
    extra, warnings = calibrated_cells(cal, list(latest.values()), mx, lb.rows, lb.cells, seed=lb.seed,
                                       n_boot=lb.n_boot, source=source)
    added = tuple(dict.fromkeys(metric for metric, _, _ in extra))
    return replace(lb, cells=lb.cells | extra, metrics=lb.metrics + added, notes=(*lb.notes, calibration_note(cal)),
                   warnings=(*lb.warnings, *warnings), calibration=cal.label,
                   calibration_id=cal.digest)


def calibrated(board: Leaderboard, judgments: Sequence[Judgment], path: Path | None,
               items: Sequence[Item] | None = None) -> Leaderboard:
    """`board` with the calibrated cells of the calibration file at `path` (unchanged when None)."""
    if path is None:
        return board
    return with_calibration(board, judgments, load_calibration(path), path, items)


def calibrated_leaderboard(judgments: Sequence[Judgment], options: LeaderboardOptions,
                           calibration: Path | None) -> Leaderboard:
    """`build_leaderboard`, then the calibrated cells of the file at `calibration` beside the raw ones.

    Commands call this rather than the leaderboard calling it: the calibrated cells read the leaderboard's matrix
    helpers, so the leaderboard must not import this module back (no import cycle)."""
    return calibrated(build_leaderboard(judgments, options), judgments, calibration, options.items)
