"""Gameability: does padding a writing raise its score — raw, and length-controlled?

For each judge method and each padding perturbation of the suite (`pad`: filler sentences; `repeat`: sentences
said twice), every perturbed writing is paired with the writing it came from, as in Table 7. The raw cell is
the mean of (perturbed − original) root scores; the controlled cell is the same change of the length-controlled
score, which subtracts the length model's β times the change of ln length:

    Δ_controlled = Δ_raw − β · ln(padded chars / original chars)

(the reference's length cancels). β is the coefficient of `report.length_fit` fitted on the method's original
writings — with item effects when the sample's items carry two writings of different lengths or more, else with
task effects (the robustness sample draws writings per model, so items are seldom shared; the table says which).
Both cells carry seeded 95% bootstrap intervals over the pairs; ▲ marks a mean rise (▲* the whole interval above
zero): padding paid. A controlled score that resists padding has a cell near zero where the raw one rises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from howtobench.judges.base import EmptyConvention, Judgment, counted_score
from howtobench.report.length_fit import Observations, fit, identified
from howtobench.report.tables import Table
from howtobench.stats import bootstrap_ci, rng_for

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


def _source(model: str, kind: str) -> str:
    return model.removesuffix(f"+{kind}")


def pad_cell(originals: Mapping[tuple[str, str], Judgment], padded: Sequence[Judgment], kind: str,
             beta: float | None, empty: EmptyConvention, *, label: str, seed: int, n_boot: int) -> PadCell:
    """Raw and controlled mean change over the pairs where both writings have a score and a length."""
    raw, ratio = [], []
    for j in padded:
        before = originals.get((j.item_id, _source(j.model, kind)))
        a, b = counted_score(before, empty) if before else None, counted_score(j, empty)
        if a is None or b is None or not (before and before.writing_chars and j.writing_chars):
            continue
        raw.append(b - a)
        ratio.append(j.writing_chars / before.writing_chars)
    if not raw:
        return PadCell(kind, 0, None, None, None, None, None)
    deltas = np.array(raw)
    logs = np.log(np.array(ratio))
    controlled = deltas - beta * logs if beta is not None else None

    def ci(values: np.ndarray, what: str) -> tuple[float, float] | None:
        return bootstrap_ci(values, n_boot=n_boot, rng=rng_for(seed, f"gameability|{label}|{kind}|{what}"))

    return PadCell(kind, len(raw), float(deltas.mean()), ci(deltas, "raw"),
                   float(controlled.mean()) if controlled is not None else None,
                   ci(controlled, "controlled") if controlled is not None else None, float(np.mean(ratio)))


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
    columns = ["method", "β (length)", "fit"]
    for kind in padding:
        columns += [f"{kind} × length", f"{kind} raw Δ", f"{kind} controlled Δ", f"{kind} n"]
    table = Table("Gameability: does padding raise the score? Raw and length-controlled change", columns, digits=2)
    for method, sets in judgments.items():
        originals = {(j.item_id, j.model): j for j in sets.get(ORIGINAL, ())}
        lb = length_beta(list(originals.values()), empty)
        line: list[object] = [method, "-" if lb.beta is None else f"{lb.beta:+.3f}",
                              f"{lb.effects} effects, {lb.n} writings" if lb.beta is not None else "no fit"]
        for kind in padding:
            cell = pad_cell(originals, sets.get(kind, ()), kind, lb.beta, empty, label=method, seed=seed,
                            n_boot=n_boot)
            line += ["-" if cell.length_ratio is None else f"{cell.length_ratio:.2f}",
                     _show(cell.raw, cell.raw_ci), _show(cell.controlled, cell.controlled_ci), cell.n]
        table.add_row(*line)
    table.notes += [
        "Δ = mean(padded − original) [95% bootstrap CI] over writings with both scores and lengths; controlled "
        "Δ = raw Δ − β · ln(padded / original length); ▲ padding raised the score (▲* the whole CI above 0).",
        "β: the length model (score on ln(writing / reference chars) with model and item effects, docs/"
        "length-control.md) fitted on the original writings; 'task effects' when the sample shares too few items.",
    ]
    return table
