"""Gameability: does padding a writing raise its score — raw, and length-controlled?

For each judge method and each padding perturbation of the suite (`pad`: filler sentences; `repeat`: sentences
said twice), every perturbed writing is paired with the writing it came from, as in Table 7. The raw cell is
the mean of (perturbed − original) root scores; the controlled cell is the same change less what the judge pays
for the change of length:

    Δ_controlled = Δ_raw − β_below · Δmin(x, 0) − β_above · Δmax(x, 0),    x = ln(writing chars / reference chars)

with the slopes measured on the suite's own pairs (`report.length_anchor`: content fixed, length varied — the
judge's length response, not an association), pooled over the padding kinds of the method. The observational β
of `stats.length_fit` on the original writings (item effects when identified, else task effects: the sample
draws writings per model, so items are seldom shared) is printed beside it as a check: with task effects it
under-corrected a true slope of 1.0 (0.35, or −0.11), which is why it no longer sets the controlled cell.
Both cells carry seeded 95% bootstrap intervals over the pairs; ▲ marks a mean rise (▲* the whole interval above
zero): padding paid. A controlled score that resists padding has a cell near zero where the raw one rises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.document import Table
from howtobench.judges.base import EmptyConvention, Judgment, counted_score
from howtobench.report.length_anchor import Pair, PairSlope, judgment_pairs, length_change, pair_slope
from howtobench.stats import bootstrap_ci, rng_for
from howtobench.stats.length_fit import Observations, fit, identified

PADDING_KINDS: tuple[str, ...] = ("pad", "repeat")
ORIGINAL = "original"
RISE_TOLERANCE = 1e-9  # a rise below this is floating-point rounding of a zero change, not padding paying


@dataclass(frozen=True)
class LengthBeta:
    beta: float | None
    effects: str
    """"item" or "task": what the fit held fixed besides the models (see the module docstring)."""
    n: int


def _observations(rows: Sequence[tuple[Judgment, float]], by: str) -> Observations:
    models = sorted({j.model for j, _ in rows})
    groups = sorted({(j.task, j.item_id) if by == "item" else (j.task, "") for j, _ in rows})
    m_ix, g_ix = {m: k for k, m in enumerate(models)}, {g: k for k, g in enumerate(groups)}
    return Observations(
        model=np.array([m_ix[j.model] for j, _ in rows]),
        item=np.array([g_ix[(j.task, j.item_id) if by == "item" else (j.task, "")] for j, _ in rows]),
        x=np.array([math.log((j.writing_chars or 0) / (j.reference_chars or 1)) for j, _ in rows]),
        y=np.array([v for _, v in rows], dtype=float), n_models=len(models), n_items=len(groups))


def length_beta(originals: Sequence[Judgment], empty: EmptyConvention) -> LengthBeta:
    """β fitted on the original writings with a score and both lengths (item effects when identified)."""
    rows = [(j, v) for j in originals if (v := counted_score(j, empty)) is not None
            and j.writing_chars and j.reference_chars]
    for by in ("item", "task"):
        if len(rows) >= 3:
            obs = _observations(rows, by)
            if obs.n_models >= 1 and np.ptp(obs.x) > 0 and identified(obs):
                return LengthBeta(fit(obs).beta, by, len(rows))
    return LengthBeta(None, "none", len(rows))


@dataclass(frozen=True)
class PadCell:
    kind: str
    n: int
    raw: float | None
    raw_ci: tuple[float, float] | None
    controlled: float | None
    controlled_ci: tuple[float, float] | None
    length_ratio: float | None
    """Mean padded / original length."""


def _pairs(originals: Mapping[tuple[str, str], Judgment], padded: Sequence[Judgment], kind: str,
           empty: EmptyConvention) -> list[Pair]:
    keyed = {(j.task, j.item_id, j.model): j for j in originals.values()}
    return judgment_pairs(keyed, padded, f"+{kind}", empty)


def pad_cell(originals: Mapping[tuple[str, str], Judgment], padded: Sequence[Judgment], kind: str,
             slope: PairSlope | None, empty: EmptyConvention, *, label: str, seed: int, n_boot: int) -> PadCell:
    """Raw and controlled mean change over the pairs where both writings have a score and both lengths."""
    pairs = _pairs(originals, padded, kind, empty)
    if not pairs:
        return PadCell(kind, 0, None, None, None, None, None)
    deltas = np.array([p.y_after - p.y_before for p in pairs])
    ratio = np.exp(np.array([p.x_after - p.x_before for p in pairs]))
    controlled = None
    if slope is not None:
        controlled = deltas - length_change(pairs, slope.beta_above is not None) @ slope.betas

    def ci(values: np.ndarray, what: str) -> tuple[float, float] | None:
        return bootstrap_ci(values, n_boot=n_boot, rng=rng_for(seed, f"gameability|{label}|{kind}|{what}"))

    return PadCell(kind, len(pairs), float(deltas.mean()), ci(deltas, "raw"),
                   float(controlled.mean()) if controlled is not None else None,
                   ci(controlled, "controlled") if controlled is not None else None, float(np.mean(ratio)))


def _slope_text(slope: PairSlope | None) -> str:
    if slope is None:
        return "-"
    text = f"{slope.beta:+.3f}"
    if slope.beta_above is not None:
        text += f" below, {slope.beta_above:+.3f} above the reference"
    return text + f" ({slope.n} pairs)"


def _show(mean: float | None, ci: tuple[float, float] | None) -> str:
    if mean is None:
        return "-"
    flag = ("▲*" if ci and ci[0] > 0 else "▲") if mean > RISE_TOLERANCE else ""
    return f"{mean:+.2f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "") + flag


def gameability_table(judgments: Mapping[str, Mapping[str, Sequence[Judgment]]], kinds: Sequence[str], *,
                      seed: int = 0, n_boot: int = 1000, empty: EmptyConvention = "exclude") -> Table | None:
    """Table 7's shape for the padding kinds the suite ran (None when it ran none): per method, the length
    coefficient, then raw and controlled mean change per padding kind."""
    padding = [k for k in PADDING_KINDS if k in kinds]
    if not padding:
        return None
    columns = ["method", "β from the pairs (used)", "β observational (check)", "fit"]
    for kind in padding:
        columns += [f"{kind} × length", f"{kind} raw Δ", f"{kind} controlled Δ", f"{kind} n"]
    table = Table("Gameability: does padding raise the score? Raw and length-controlled change", columns, digits=2)
    for method, sets in judgments.items():
        originals = {(j.item_id, j.model): j for j in sets.get(ORIGINAL, ())}
        lb = length_beta(list(originals.values()), empty)
        pairs = [p for kind in padding for p in _pairs(originals, sets.get(kind, ()), kind, empty)]
        slope = pair_slope(pairs, seed=seed, n_boot=0, label=f"gameability|{method}")
        line: list[object] = [method, _slope_text(slope), "-" if lb.beta is None else f"{lb.beta:+.3f}",
                              f"{lb.effects} effects, {lb.n} writings" if lb.beta is not None else "no fit"]
        for kind in padding:
            cell = pad_cell(originals, sets.get(kind, ()), kind, slope, empty, label=method, seed=seed,
                            n_boot=n_boot)
            line += ["-" if cell.length_ratio is None else f"{cell.length_ratio:.2f}",
                     _show(cell.raw, cell.raw_ci), _show(cell.controlled, cell.controlled_ci), cell.n]
        table.add_row(*line)
    table.notes += [
        "Δ = mean(padded − original) [95% bootstrap CI] over writings with both scores and lengths; controlled "
        "Δ = raw Δ − what the judge pays for the length change, by the slopes measured on these pairs (content "
        "fixed, length varied; below and above the reference); ▲ padding raised the score (▲* the whole CI above 0).",
        "β observational: the length model (score on ln(writing / reference chars) with model and item effects, "
        "docs/length-control.md) on the original writings, an association shown as a check; 'task effects' when "
        "the sample shares too few items.",
    ]
    return table
