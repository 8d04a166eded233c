"""The paper as the reference judge: a system-level line from a new judge's cell means to Table 4's.

Table 4 publishes one number per model and task (and genre), no per-writing scores, so no writing-level map can be
fitted. Instead the new judge scores (a stratified sample of) the shipped writings of the paper's ten models, and
per scope (each task, and All) the ten published values are regressed on the ten cell means:
paper = a + b · new (`scipy.stats.linregress`). A model of yours judged by the new judge is placed on the paper's
scale by the line of its scope, with a 95% prediction interval for a new system,

    se² = s² · (1 + 1/n + (x0 − x̄)² / Sxx) + b² · se(x0)²,   df = n − 2,

s being the residual spread of the paper's models around the line and se(x0) the sampling error of your model's
own cell mean: the interval says how far a model at your mean may sit from the line, as the paper's models do.

When a line cannot be trusted it is refused, never applied: a scope whose Kendall τ between the new judge's and
the paper's model order is not significantly positive (one-sided p >= 0.05, `scipy.stats.kendalltau(...,
alternative="greater")`) gets no line. With ten models that needs τ >= 0.47 (at least 33 of the 45 pairs in the
paper's order): a judge that cannot order the paper's models like GPT-4o did has no business translating yours
into GPT-4o's units, and a line through ten unordered points would still print a number that looks precise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.calibration.record import Calibration, JudgeInfo, LineFit, judge_info
from howtobench.data.paper import ALL_ROW, PaperTable
from howtobench.errors import ConfigError, DataError
from howtobench.judges.base import Judgment

ALPHA = 0.05
MIN_MODELS = 5


def cell_means(judgments: Sequence[Judgment]) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(row, model) -> (mean root, its standard error, n) over the scored judgments; rows: task ids, genre ids,
    and All."""
    groups: dict[tuple[str, str], list[float]] = {}
    for j in judgments:
        if j.score is None or j.status not in ("ok", "renormalized"):
            continue
        for row in (j.task, j.genre, ALL_ROW):
            groups.setdefault((row, j.model), []).append(j.score)
    out = {}
    for key, vals in groups.items():
        v = np.array(vals)
        se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
        out[key] = (float(v.mean()), se, int(v.size))
    return out


def fit_line(scope: str, points: Mapping[str, tuple[float, float]]) -> LineFit:
    """The line paper = a + b · new through one scope's (new mean, published) points, with its τ test."""
    from scipy import stats

    models = sorted(points)
    x = np.array([points[m][0] for m in models])
    y = np.array([points[m][1] for m in models])
    tau = stats.kendalltau(x, y, alternative="greater")
    fit = stats.linregress(x, y)
    resid = y - (fit.intercept + fit.slope * x)
    return LineFit(scope=scope, slope=float(fit.slope), intercept=float(fit.intercept), n=len(models),
                   x_mean=float(x.mean()), sxx=float(((x - x.mean()) ** 2).sum()),
                   residual_sd=float(np.sqrt((resid**2).sum() / (len(models) - 2))), x_min=float(x.min()),
                   x_max=float(x.max()), kendall_tau=float(tau.statistic), kendall_p=float(tau.pvalue),
                   pearson=float(fit.rvalue), refused=not float(tau.pvalue) < ALPHA,
                   points={m: points[m] for m in models})


@dataclass(frozen=True)
class Placement:
    """A model placed on the paper's scale by one line."""

    value: float
    low: float
    high: float
    extrapolated: bool


def place(line: LineFit, x0: float, x0_se: float = 0.0) -> Placement:
    """`x0` (a new-judge mean with standard error `x0_se`) on the paper's scale, with its 95% prediction interval."""
    from scipy import stats

    y0 = line.intercept + line.slope * x0
    var = line.residual_sd**2 * (1 + 1 / line.n + (x0 - line.x_mean) ** 2 / line.sxx) + (line.slope * x0_se) ** 2
    half = float(stats.t.ppf(0.975, line.n - 2)) * float(np.sqrt(var))
    return Placement(y0, y0 - half, y0 + half, not line.x_min <= x0 <= line.x_max)


def agreement(judgments: Sequence[Judgment], paper: PaperTable) -> dict[str, float | int | None]:
    """Pearson r between the new judge's cell means and the paper's over every published cell both have."""
    means = cell_means(judgments)
    pairs = [(means[k][0], v) for k, v in paper.values.items() if k in means]
    if len(pairs) < 3:
        return {"pearson_cells": None, "cells": len(pairs)}
    x, y = np.array(pairs).T
    return {"pearson_cells": float(np.corrcoef(x, y)[0, 1]), "cells": len(pairs)}


def fit_to_paper(judgments: Sequence[Judgment], paper: PaperTable, *, seed: int = 0) -> Calibration:
    """The paper-kind calibration of the judge behind `judgments` (its judgments of the paper models' writings).

    Every task scope and All are fitted; a scope whose τ is not significant is kept marked refused (so the refusal
    is on record) and never applied; `refuse_unsupported` stops when All itself is refused."""
    info = judge_info(judgments, "new")
    means = cell_means([j for j in judgments if j.model in paper.models])
    rows = [t for t in paper.items if any((t, m) in means for m in paper.models)] + [ALL_ROW]
    lines = []
    for row in rows:
        points = {m: (means[(row, m)][0], v) for m in paper.models
                  if (row, m) in means and (v := paper.get(row, m)) is not None}
        if len(points) < MIN_MODELS:
            raise ConfigError(f"{row}: the new judge scored writings of {len(points)} of the paper's models; a "
                              f"system-level line needs at least {MIN_MODELS}")
        lines.append(fit_line(row, points))
    return Calibration(kind="paper", reference=JudgeInfo(model=paper.judge, method="tow"), new=info, seed=seed,
                       n_boot=0, lines=lines, drift=agreement(judgments, paper), notes=[paper.source])


def refusal_line(line: LineFit) -> str:
    return (f"refused for {line.scope}: Kendall τ between the new judge's and the paper's order of its {line.n} "
            f"models is {line.kendall_tau:.3f} (one-sided p = {line.kendall_p:.3f}, needs p < {ALPHA}); a judge "
            "that does not order the paper's models like its judge cannot translate scores into its units")


def refuse_unsupported(cal: Calibration) -> None:
    """Raise DataError, one line with every scope's τ, when the All line is refused: nothing can be placed."""
    whole = next((ln for ln in cal.lines if ln.scope == ALL_ROW), None)
    if whole is not None and whole.refused:
        others = ", ".join(f"{ln.scope} τ {ln.kendall_tau:.3f} (p {ln.kendall_p:.3f})" for ln in cal.lines
                           if ln.scope != ALL_ROW)
        raise DataError(refusal_line(whole) + (f"; per task: {others}" if others else "") + "; no calibration written")


def agreement_lines(cal: Calibration) -> list[str]:
    """How well the new judge agrees with the paper's judge, per scope, for the terminal."""
    out = [f"{ln.scope}: Kendall τ {ln.kendall_tau:.3f} (one-sided p {ln.kendall_p:.4f}), Pearson {ln.pearson:.3f}, "
           f"paper = {ln.intercept:+.3f} + {ln.slope:.3f} · new, residual sd {ln.residual_sd:.3f}"
           + (" — REFUSED" if ln.refused else "") for ln in cal.lines]
    pearson = cal.drift.get("pearson_cells")
    if isinstance(pearson, float):
        out.append(f"Pearson over {cal.drift.get('cells')} published cells (tasks, genres, All): {pearson:.3f}")
    return out


def placement_lines(cal: Calibration, judgments: Sequence[Judgment]) -> list[str]:
    """Each model of `judgments` placed on the paper's scale, per row with a line (All first), for the terminal."""
    means = cell_means(judgments)
    out = []
    for model in sorted({j.model for j in judgments}):
        parts = []
        for row in (ALL_ROW, *sorted({ln.scope for ln in cal.lines} - {ALL_ROW})):
            line, found = cal.line_for(row), means.get((row, model))
            if line is None or found is None:
                continue
            placed = place(line, found[0], found[1] if np.isfinite(found[1]) else 0.0)
            parts.append(f"{'All' if row == ALL_ROW else row} {placed.value:.2f} [{placed.low:.2f}, {placed.high:.2f}]"
                         + (" (extrapolated)" if placed.extrapolated else ""))
        if parts:
            out.append(f"{model} on the paper's scale: " + "; ".join(parts))
    return out
