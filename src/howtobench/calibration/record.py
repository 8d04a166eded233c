"""The calibration file: which judges, which tree and prompts, the anchors, the maps and their fit.

Two kinds share one file shape (`kind`): "anchors" (a map new -> reference per node and task, fitted on writings
both judges scored; `calibration.fit`) and "paper" (a line new -> the paper's published Table 4, fitted at system
level on the paper's ten models; `calibration.paper`). The anchors' scores are kept in the file, so the map and its
bootstrap are refitted from them (seeded) wherever the file is used: the file is its own evidence.

A calibration belongs to one new judge: judgments whose judge model, method, tree or prompts differ from the ones it
was fitted on are refused (`check_matches`), as their scores are on another footing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment
from howtobench.outputs import write_text_atomic
from howtobench.version import __version__

FORMAT_VERSION = 1
ROOT = "score"
"""The node name of the root score in maps and anchors (a judgment's `score`)."""
POOLED = "pooled"
"""The scope of a map fitted on the anchors of every task."""


class JudgeInfo(BaseModel):
    """What made one side's scores: the judge model, the method, and the tree and prompt hashes."""

    model: str | None
    method: str
    tree_hash: str | None = None
    prompt_hash: str | None = None
    prompt_language: str | None = None

    @property
    def name(self) -> str:
        return self.model or "an unrecorded judge"


class Anchor(BaseModel):
    """One writing both judges scored: its root and node scores under each."""

    item_id: str
    model: str
    task: str
    genre: str
    reference: dict[str, float | None]
    new: dict[str, float | None]


class MapFit(BaseModel):
    """One fitted map (a node in a scope): its knots and how well it fits its anchors."""

    node: str
    scope: str
    knots_x: list[float]
    knots_y: list[float]
    n_anchors: int
    rmse: float
    """Root mean square of reference − mapped new over the anchors (in-sample)."""
    band_width: float
    """Median width of the map's 95% bootstrap band over the anchors' new scores."""


class LineFit(BaseModel):
    """A system-level line paper = intercept + slope · new, with what its prediction intervals need."""

    scope: str
    slope: float
    intercept: float
    n: int
    x_mean: float
    sxx: float
    residual_sd: float
    x_min: float
    x_max: float
    kendall_tau: float
    kendall_p: float
    """One-sided p of τ > 0 (scipy.stats.kendalltau, alternative="greater")."""
    pearson: float
    refused: bool
    points: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Per paper model: (the new judge's cell mean, the published value)."""


class Calibration(BaseModel):
    """A calibration file's content."""

    kind: Literal["anchors", "paper"]
    format_version: int = FORMAT_VERSION
    howtobench: str = __version__
    reference: JudgeInfo
    new: JudgeInfo
    seed: int = 0
    n_boot: int = 1000
    anchors: list[Anchor] = Field(default_factory=list)
    maps: list[MapFit] = Field(default_factory=list)
    lines: list[LineFit] = Field(default_factory=list)
    drift: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """The words every calibrated number carries."""
        if self.kind == "paper":
            models = len(self.lines[0].points) if self.lines else 0
            return f"calibrated to the paper's {self.reference.name} (Table 4) on its {models} models, system level"
        return f"calibrated to {self.reference.name} on {len(self.anchors)} anchors"

    @property
    def digest(self) -> str:
        """Its kind and the first 12 hex digits of the sha256 of its content: which calibration made a number."""
        return f"{self.kind}-{hashlib.sha256(self.model_dump_json().encode('utf-8')).hexdigest()[:12]}"

    def map_for(self, node: str, scope: str) -> MapFit | None:
        return next((m for m in self.maps if m.node == node and m.scope == scope), None)

    def line_for(self, scope: str) -> LineFit | None:
        return next((ln for ln in self.lines if ln.scope == scope and not ln.refused), None)


def save_calibration(cal: Calibration, path: Path) -> None:
    write_text_atomic(path, cal.model_dump_json(indent=1) + "\n")


def load_calibration(path: Path) -> Calibration:
    """Read a calibration file; a missing or malformed one is a ConfigError naming it."""
    try:
        return Calibration.model_validate_json(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"--calibration {path}: no such file (write one with `howtobench calibrate`)") from None
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"--calibration {path}: not a calibration file ({first})") from None


def judge_info(judgments: Sequence[Judgment], role: str) -> JudgeInfo:
    """The one judge behind `judgments`; several judge models, methods, trees or prompts are a ConfigError."""
    if not judgments:
        raise ConfigError(f"no {role} judgments")
    fields: dict[str, set[str | None]] = {
        "model": {j.judge_model for j in judgments}, "method": {j.method for j in judgments},
        "tree_hash": {j.tree_hash for j in judgments}, "prompt_hash": {j.prompt_hash for j in judgments},
        "prompt_language": {j.prompt_language for j in judgments}}
    mixed = [f"{k} ({', '.join(sorted(str(v) for v in vs))})" for k, vs in fields.items() if len(vs) > 1]
    if mixed:
        raise ConfigError(f"the {role} judgments mix {'; '.join(mixed)}: a calibration maps one judge onto one judge")
    return JudgeInfo.model_validate({k: next(iter(vs)) for k, vs in fields.items()})


def check_matches(cal: Calibration, judgments: Sequence[Judgment], path: Path | str) -> None:
    """Refuse, in one line, judgments that the calibration was not fitted for (another judge, method, tree or
    prompts than its new judge's)."""
    found = judge_info(judgments, "calibrated")
    want = cal.new
    diffs = [f"{what} {got!r}, the calibration's is {exp!r}"
             for what, got, exp in (("judge", found.model, want.model), ("method", found.method, want.method),
                                    ("tree", found.tree_hash, want.tree_hash),
                                    ("prompts", found.prompt_hash, want.prompt_hash))
             if got != exp]
    if diffs:
        raise ConfigError(f"--calibration {path} does not fit these judgments: {diffs[0]}"
                          + (f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""))
