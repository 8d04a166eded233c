"""Negotiation inconsistency (section 5.3): how much the aggregation weights move between samples.

For one unit (a writing judged n times by auto-planning, or an instruction whose ToW weights were
negotiated n times) and one leaf k, let l_k^(t) be the leaf's share in trial t:
  * auto-planning: l_k = s_k / S, the sub-score over the sample's total score;
  * ToW: l_k = the weight J_W gave leaf k.
Then delta = sum_{t=2..n} |l_k^(t) - l_k^(1)| and sigma is the spread of l_k over the n trials, averaged
over units and leaves. Which spread (`SIGMA_FORMULAS`):
  * "sample" (default): sqrt(sum_t (l_k^(t) - mean)^2 / (n - 1)), the sample standard deviation. The paper
    prints the sum without a divisor, but its own ratios delta/sigma (0.273/0.059 = 4.63, 0.080/0.017 = 4.71)
    are what the sample standard deviation gives at n = 5 (4.8 for normal noise in simulation; 1/n gives 5.4,
    the literal formula 2.4, its sigma being twice as large), so this is what it reported;
  * "population": the same with 1/n;
  * "literal": sqrt(sum_t (l_k^(t) - mean)^2), the formula as printed in section 5.3.
Only leaves present in every usable trial of a unit count; trials without a score (failures) or with
S = 0 are left out, never imputed. Judgments of empty writings are left out, as the authors' pipeline writes
none for them (an empty writing is judged without a call, so it has no sampled shares; ToW weights belong to
the instruction and are read from its other writings); their number is reported (`empty_judgments`).

Weight-sample file (what the negotiator's `--samples n` writes), one JSON object per line:
    {"item_id": "infer_354", "sample": 0, "weights": {"opening_ending": 0.1, "logic": 0.4, ...}}
`sample` is the trial index (0..n-1); `weights` maps leaf id to weight, flat (as `Judgment.weights`)
or nested by node ({"content": {...}, "format": {...}}); optional fields such as `genre` or `task`
are ignored. `WeightSample` below is the schema; `weight_sample_line` writes one line.
ToW judgment files made with `howtobench judge --method tow --samples n` carry the same information in
`Judgment.meta["sample_weights"]` (one flat dict per sample) and are read directly (`tow_weight_samples`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

from howtobench.data.rows import read_model_rows
from howtobench.errors import DataError, RowError
from howtobench.judges.base import Judgment, SampleResult
from howtobench.meta.judgments import SkipReport


class WeightSample(BaseModel):
    """One sampled negotiation of one instruction's weights."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    sample: int
    weights: dict[str, float]

    @field_validator("weights", mode="before")
    @classmethod
    def _flatten(cls, value: Any) -> Any:
        """Accept {node: {leaf: w}} as well as {leaf: w}."""
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            return {leaf: w for node in value.values() for leaf, w in node.items()}
        return value


def weight_sample_line(item_id: str, sample: int, weights: dict[str, float]) -> str:
    """One line of a weight-sample file (for writers such as the negotiator's sampling command)."""
    return json.dumps({"item_id": item_id, "sample": sample, "weights": weights}, ensure_ascii=False) + "\n"


SIGMA_FORMULAS: dict[str, str] = {
    "sample": "sqrt(Σ_t (l_t − μ)² / (n − 1))",
    "population": "sqrt(Σ_t (l_t − μ)² / n)",
    "literal": "sqrt(Σ_t (l_t − μ)²)",
}
"""σ variants by name -> the formula printed next to the number (n = trials of the unit)."""


@dataclass
class Inconsistency:
    """Mean delta and sigma over (unit, leaf) pairs, with per-leaf means and counts."""

    delta: float
    sigma: float
    units: int
    trials: int
    per_leaf: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    skipped_units: int = 0
    sigma_formula: str = "sample"
    empty_left_out: int = 0


@dataclass(frozen=True)
class Trials:
    """The shares of one unit: rows = trials in order, columns = leaves."""

    unit: str
    leaves: list[str]
    shares: np.ndarray


def _divisor(n: int, formula: str) -> int:
    """What the squared deviations of n trials are divided by under each σ variant."""
    divisors = {"sample": n - 1, "population": n, "literal": 1}
    if formula not in divisors:
        raise ValueError(f"sigma formula must be one of {', '.join(SIGMA_FORMULAS)}, not {formula!r}")
    return divisors[formula]


def fluctuation(shares: np.ndarray, formula: str = "sample") -> tuple[np.ndarray, np.ndarray]:
    """Per-leaf delta and sigma of a (trials, leaves) array (at least two trials)."""
    delta = np.abs(shares[1:] - shares[0]).sum(axis=0)
    squares = ((shares - shares.mean(axis=0)) ** 2).sum(axis=0)
    sigma = np.sqrt(squares / _divisor(shares.shape[0], formula))
    return delta, sigma


def _shared_matrix(unit: str, trials: list[dict[str, float]]) -> Trials | None:
    """Keep leaves present in every trial; None when fewer than two trials or no shared leaf remain."""
    if len(trials) < 2:
        return None
    common = [k for k in trials[0] if all(k in t for t in trials[1:])]
    if not common:
        return None
    return Trials(unit, common, np.array([[t[k] for k in common] for t in trials], dtype=float))


def _shares(sample: SampleResult, total: float, match: str) -> dict[str, float]:
    """l_k = s_k / S of one sample, keyed by aspect name or by position ('#1', '#2', ...)."""
    scored = [(leaf.name, leaf.score) for leaf in sample.leaves if leaf.score is not None]
    return {(name if match == "name" else f"#{k + 1}"): s / total for k, (name, s) in enumerate(scored)}


def autoplan_trials(judgments: list[Judgment], match: str = "name") -> tuple[list[Trials], int]:
    """l_k = s_k / S for each usable sample of each sampled judgment; also the number of units skipped.

    Auto-planning names its aspects freely, so `match="name"` compares an aspect only when every sample
    names it alike (the honest default); `match="position"` pairs the k-th aspect of every sample.
    """
    if match not in ("name", "position"):
        raise ValueError(f"match must be 'name' or 'position', not {match!r}")
    out: list[Trials] = []
    skipped = 0
    for j in judgments:
        if len(j.samples) < 2 or j.status == "empty":
            continue
        usable = [(s, s.score) for s in sorted(j.samples, key=lambda s: s.index)
                  if s.score is not None and s.score != 0 and s.status != "failed"]
        found = _shared_matrix(f"{j.item_id}/{j.model}", [_shares(s, total, match) for s, total in usable])
        if found is None:
            skipped += 1
        else:
            out.append(found)
    return out, skipped


def weight_trials(samples: list[WeightSample]) -> tuple[list[Trials], int]:
    """Weights of each instruction's sampled negotiations, in sample order."""
    by_item: dict[str, list[WeightSample]] = defaultdict(list)
    for s in samples:
        by_item[s.item_id].append(s)
    out: list[Trials] = []
    skipped = 0
    for item, group in by_item.items():
        found = _shared_matrix(item, [s.weights for s in sorted(group, key=lambda s: s.sample)])
        if found is None:
            skipped += 1
        else:
            out.append(found)
    return out, skipped


def tow_weight_samples(judgments: list[Judgment]) -> list[WeightSample]:
    """The sampled weight sets stored in ToW judgments (`meta["sample_weights"]`), once per item."""
    out: list[WeightSample] = []
    seen: set[str] = set()
    for j in judgments:
        sampled = j.meta.get("sample_weights") or []
        if j.item_id in seen or len(sampled) < 2 or j.status == "empty":
            continue
        seen.add(j.item_id)
        out += [WeightSample(item_id=j.item_id, sample=k, weights=w) for k, w in enumerate(sampled)]
    return out


def empty_judgments(judgments: list[Judgment]) -> int:
    """Judgments of empty writings: left out of the trials (see the module docstring), counted in the output."""
    return sum(1 for j in judgments if j.status == "empty")


def summarize(trials: list[Trials], skipped: int = 0, sigma: str = "sample", empty: int = 0) -> Inconsistency:
    """Average delta and sigma (variant `sigma`, see `SIGMA_FORMULAS`) over every (unit, leaf) pair."""
    _divisor(2, sigma)
    if not trials:
        raise DataError("no unit has two or more usable trials with a shared leaf: nothing to measure")
    deltas: dict[str, list[float]] = defaultdict(list)
    sigmas: dict[str, list[float]] = defaultdict(list)
    for t in trials:
        delta, spread = fluctuation(t.shares, sigma)
        for k, leaf in enumerate(t.leaves):
            deltas[leaf].append(float(delta[k]))
            sigmas[leaf].append(float(spread[k]))
    all_d = [d for v in deltas.values() for d in v]
    all_s = [s for v in sigmas.values() for s in v]
    per_leaf = {k: (float(np.mean(deltas[k])), float(np.mean(sigmas[k])), len(deltas[k])) for k in deltas}
    n_trials = max(t.shares.shape[0] for t in trials)
    return Inconsistency(float(np.mean(all_d)), float(np.mean(all_s)), len(trials), n_trials, per_leaf, skipped,
                         sigma, empty)


def load_weight_samples(path: Path, *, strict: bool = False, report: SkipReport | None = None) -> list[WeightSample]:
    """Rows of a weight-sample file; bad rows are RowErrors (file:line), skipped and counted unless strict."""
    return read_model_rows(path, WeightSample, "weight sample", strict=strict,
                           skipped=report.skipped if report is not None else None)


def detect_kind(path: Path) -> str:
    """'weights' for a weight-sample file, 'tow' for ToW judgments with sampled weights, else 'autoplan'.

    Decided by the first row."""
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise RowError(path, lineno, "first row is not JSON") from None
            if not isinstance(row, dict) or "method" not in row:
                return "weights"
            return "tow" if (row.get("meta") or {}).get("sample_weights") else "autoplan"
    raise DataError(f"{path}: empty file")
