"""The judgment record every method writes, and the judge interface.

One `Judgment` per (method, item, model): the final score (None when it cannot be
computed honestly), every sub-score with its reason or failure, and the provenance
(judge model, tree / prompt hashes, cache keys, tokens). ToW, the LLM baselines and the
overlap metrics all write this shape, so leaderboards and meta-evaluation read one format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from howtobench.data.models import Item, Writing
from howtobench.llm.types import Usage

Status = Literal["ok", "failed", "empty", "renormalized"]
EmptyConvention = Literal["exclude", "lowest"]
EMPTY_CONVENTIONS: tuple[str, ...] = ("exclude", "lowest")
"""How means, correlations and score differences treat an empty writing: "exclude" (default: left out and counted,
as the authors' pipeline writes no judgment for an empty writing, so nothing downstream of it saw one) or "lowest"
(the lowest score the judge recorded for it, flagged `empty`). `counted_score` is the one place that applies it."""
EMPTY_TREATMENT: dict[str, str] = {"exclude": "left out", "lowest": "scored lowest"}
"""What each convention does to an empty writing, in the words every output uses."""
LeafStatus = Literal["ok", "failed", "empty"]


class LeafResult(BaseModel):
    """One scored dimension (a ToW leaf, a rubric dimension, an auto-plan sub-score)."""

    name: str
    node: str | None = None
    score: float | None = None
    raw_score: float | None = None
    reason: str | None = None
    status: LeafStatus = "ok"
    error: str | None = None
    raw_text: str | None = None
    cache_key: str | None = None


class SampleResult(BaseModel):
    """One sample of a self-consistency run (or the only one when n = 1)."""

    index: int = 0
    score: float | None = None
    status: Status = "ok"
    nodes: dict[str, float | None] = Field(default_factory=dict)
    """This sample's node scores (ToW with sampled weights: each weight sample gives its own Content / Format);
    empty in rows written before they were stored, and for judges without nodes."""
    leaves: list[LeafResult] = Field(default_factory=list)
    error: str | None = None
    raw_text: str | None = None
    cache_key: str | None = None


class Judgment(BaseModel):
    """The full record of judging one writing with one method."""

    method: str
    item_id: str
    model: str
    task: str
    genre: str
    score: float | None = None
    status: Status = "ok"
    nodes: dict[str, float | None] = Field(default_factory=dict)
    leaves: list[LeafResult] = Field(default_factory=list)
    weights: dict[str, float] = Field(default_factory=dict)
    weight_repairs: list[str] = Field(default_factory=list)
    samples: list[SampleResult] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    # the judged writing was cut by max_tokens or a content filter (`Writing.truncated`): counted on the leaderboard
    writing_truncated: bool = False
    # characters of the judged writing and of its item's human reference, stamped by `with_lengths` so the
    # length-controlled leaderboard needs neither file again (None in rows written before; 0 = no reference)
    writing_chars: int | None = None
    reference_chars: int | None = None
    judge_model: str | None = None
    tree_hash: str | None = None
    prompt_hash: str | None = None
    prompt_language: str | None = None
    reference_source: str | None = None
    """Whose writing was the reference: "human" (the release's) or "model:NAME" / "file:NAME" (`--reference-from`,
    Appendix B.3); None in files written before it was recorded."""
    """The language of the judge's prompts (en: the authors'; zh: `--prompt-language zh`); None for no prompt."""
    usage: Usage = Field(default_factory=Usage)
    cache_keys: list[str] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    panel: PanelRecord | None = None
    """A panel's judgment (judges.panel): every judge's own judgment and the rule that combined them."""

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity used for resume: one judgment per (method, item, model)."""
        return (self.method, self.item_id, self.model)


class PanelRecord(BaseModel):
    """What a panel judgment keeps: the rule, and each judge's own judgment by the judge's name."""

    aggregate: str
    missing: str
    rule: str
    members: dict[str, Judgment]


Judgment.model_rebuild()


def with_lengths(judgment: Judgment, item: Item, writing: Writing) -> Judgment:
    """The judgment with the character counts of its writing and of the item's reference recorded."""
    return judgment.model_copy(update={"writing_chars": len(writing.output), "reference_chars": len(item.reference)})


def check_empty(empty: str) -> EmptyConvention:
    """`empty` itself when it names a convention; else a ValueError listing them."""
    if empty not in EMPTY_CONVENTIONS:
        raise ValueError(f"empty must be one of {', '.join(EMPTY_CONVENTIONS)}, not {empty!r}")
    return empty  # type: ignore[return-value]


def left_out_as_empty(judgment: Judgment, empty: EmptyConvention) -> bool:
    """True for the judgment of an empty writing when the convention leaves such writings out."""
    return judgment.status == "empty" and empty == "exclude"


def counted_score(judgment: Judgment, empty: EmptyConvention = "exclude", node: str | None = None) -> float | None:
    """The value a mean uses for this judgment (its root, or `node`): None for a failure, and for an empty writing
    unless `empty` is "lowest". Never a made-up number: a judgment without a score stays without one."""
    if judgment.status == "failed" or left_out_as_empty(judgment, empty):
        return None
    return judgment.score if node is None else judgment.nodes.get(node)


class Judge(Protocol):
    """A scoring method. Pure given (item, writing, settings): all state lives in the cache."""

    method: str

    async def judge(self, item: Item, writing: Writing) -> Judgment: ...


JudgeFactory = Callable[..., Judge]
JUDGES: dict[str, JudgeFactory] = {}


def register_judge(method: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a judge factory under its `--method` name (a dict, never an if/elif chain)."""

    def decorate(factory: JudgeFactory) -> JudgeFactory:
        JUDGES[method] = factory
        return factory

    return decorate
