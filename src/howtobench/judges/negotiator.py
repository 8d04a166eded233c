"""The weight negotiator J_W (section 3.3): one call per instruction gives the edge weights of each node.

For every negotiated node (Content, and Format where the task has it) J_W returns one weight per
leaf, each in (-1, 1), summing to 1. The weights depend only on the instruction, so they are asked
ONCE per item and shared by every model judged on it: an in-process memo with one asyncio lock per
item (ten concurrent judgments of one item make one call) on top of the client's persistent cache.

Constraint handling, in order:
1. A reply whose sum is within `SUM_TOLERANCE` of 1 (rounding such as 0.33 x 3) is accepted and
   divided by its sum; the rescale is recorded.
2. A reply that breaks a constraint (a weight outside (-1, 1), a sum off 1, a missing or non-numeric
   key) is re-asked with the reason, at most `reasks` times (each re-ask is its own cached call).
3. Still broken: repaired per node by `repair_weights` (documented there) and every repair is
   recorded as text, to be written into `Judgment.weight_repairs`. Nothing is replaced silently.
A call that fails outright (no valid JSON after the client's re-asks) yields no weights: the judge
then records a failure instead of inventing weights.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from howtobench.concurrency import gather_or_cancel
from howtobench.data.models import Item
from howtobench.judges.prompts import (
    AUTHORS_MAX_TOKENS,
    DEFAULT_PROMPT_LANGUAGE,
    EXPLANATION,
    Prompts,
    capped,
    weights_schema,
)
from howtobench.judges.tree import Node, Tree, default_tree
from howtobench.llm.reask import ask_until_accepted
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient, SamplingParams, Usage

SUM_TOLERANCE = 0.011
BOUND = 0.98
"""How far inside the paper's open interval (-1, 1) a repaired weight stays: {1, 0, 0} -> {0.98, 0.01, 0.01}."""
Weights = dict[str, dict[str, float]]
RepairKind = Literal["clipped", "uniform", "rescaled"]
REPAIR_KINDS: tuple[RepairKind, ...] = ("clipped", "uniform", "rescaled")
# How each kind of repair note ends (the notes are the record; `repair_kind` reads them back, anchored at the end
# because a note quotes J_W's own reply earlier on).
_UNIFORM = "used uniform 1/"
_CLIPPED = "by clipping to"  # notes of the repair rule before the nearest plan (stored judgments still read)
_NEAREST = "to the nearest plan within"
_RESCALED = "rescaled weights summing to"
_KIND_AT_END: tuple[tuple[RepairKind, re.Pattern[str]], ...] = (
    ("uniform", re.compile(re.escape(_UNIFORM) + r"\d+$")),
    ("clipped", re.compile(re.escape(_CLIPPED) + r" ±[\d.]+ and renormalising to \{[^{}]*\}$")),
    ("clipped", re.compile(re.escape(_NEAREST) + r" ±[\d.]+ summing to 1: \{[^{}]*\}$")),
    ("rescaled", re.compile(r"^[^:]+: " + re.escape(_RESCALED) + r" \S+ to sum 1$")),
)


@dataclass(frozen=True)
class Negotiation:
    """The weights of one item (None when the negotiator gave no usable reply), with provenance."""

    weights: Weights | None
    repairs: tuple[str, ...] = ()
    error: str | None = None
    raw_text: str | None = None
    cache_keys: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    sample_index: int = 0

    def flat(self) -> dict[str, float]:
        """{leaf id: weight} over all nodes, as stored in `Judgment.weights`."""
        return {leaf: w for node in (self.weights or {}).values() for leaf, w in node.items()}


def problems(node: Node, given: Any) -> list[str]:
    """Why the weights given for one node break the constraints (empty when they hold)."""
    ids = [leaf.id for leaf in node.leaves]
    if not isinstance(given, dict):
        return [f"{node.id}: not an object of weights"]
    missing = [i for i in ids if not _is_number(given.get(i))]
    if missing:
        return [f"{node.id}: missing or non-numeric weights for {missing}"]
    values = [float(given[i]) for i in ids]
    found = [f"{node.id}.{i}={v:g} is outside (-1, 1)" for i, v in zip(ids, values, strict=True) if not -1 < v < 1]
    total = sum(values)
    if abs(total - 1) > SUM_TOLERANCE:
        found.append(f"{node.id}: weights sum to {total:g}, not 1")
    return found


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


FLOAT_NOISE = 2e-6
"""A sum this close to 1 is noise, not a judge's rounding: float addition (0.1 + 0.2 + 0.7) or weights printed to six
decimals (0.333333 x 3 = 0.999999). Such weights are used silently (rescaled when off by more than float addition's
error); a sum further off (0.33 x 3 = 0.99) is a repair, noted."""


def rescale(node: Node, given: dict[str, Any]) -> tuple[dict[str, float], str | None]:
    """Valid weights divided by their sum (exactly 1 afterwards); the note says when that changed them by more than
    float noise (`FLOAT_NOISE`)."""
    values = {leaf.id: float(given[leaf.id]) for leaf in node.leaves}
    total = sum(values.values())
    if abs(total - 1) <= 1e-9:  # float addition (0.4 + 0.3 + 0.2 + 0.1): the weights as given
        return values, None
    scaled = {k: v / total for k, v in values.items()}
    return scaled, None if abs(total - 1) <= FLOAT_NOISE else f"{node.id}: {_RESCALED} {total:g} to sum 1"


def nearest_plan(values: list[float], bound: float = BOUND) -> list[float]:
    """The plan nearest to `values` (Euclidean) whose weights lie in [-bound, bound] and sum to 1.

    It is `clip(v_i - t)` for the one shift t that makes the clipped weights sum to 1 (the sum falls as t grows,
    so bisection finds it). A judge's {1, 0, 0} becomes {0.98, 0.01, 0.01}: the leaf it chose keeps nearly all of
    the weight; equal weights stay equal; a negative weight stays the lowest.
    """
    def clipped(shift: float) -> list[float]:
        return [min(bound, max(-bound, v - shift)) for v in values]

    low, high = min(values) - 2.0, max(values) + 2.0  # at `low` every weight is +bound, at `high` every one -bound
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if sum(clipped(mid)) > 1 else (low, mid)
    return clipped((low + high) / 2)


def repair_weights(node: Node, given: Any) -> tuple[dict[str, float], str]:
    """The documented repair of weights still broken after the re-asks, keeping the judge's plan.

    Weights present and numeric -> `nearest_plan` (every weight within ±BOUND, inside the paper's open interval
    (-1, 1), summing to 1): a whole group on one leaf stays on it. Missing or non-numeric keys -> uniform 1/n
    (there is no plan to keep).
    """
    ids = [leaf.id for leaf in node.leaves]
    if not isinstance(given, dict) or not all(_is_number(given.get(i)) for i in ids):
        uniform = {i: 1 / len(ids) for i in ids}
        return uniform, f"{node.id}: weights missing or not numeric in {given!r}; {_UNIFORM}{len(ids)}"
    repaired = dict(zip(ids, nearest_plan([float(given[i]) for i in ids]), strict=True))
    shown = {i: float(f"{w:.6g}") for i, w in repaired.items()}
    return repaired, f"{node.id}: repaired {given!r} {_NEAREST} ±{BOUND} summing to 1: {shown}"


def repair_kind(note: str) -> RepairKind | None:
    """What a `Judgment.weight_repairs` note did: moved to the nearest valid plan ("clipped"; older notes: clipped and
    renormalised), fell back to uniform 1/n, or rescaled a
    sum within SUM_TOLERANCE of 1; None for the header line ("constraints still broken after ...")."""
    return next((kind for kind, pattern in _KIND_AT_END if pattern.search(note)), None)


def repair_kinds(notes: Iterable[str]) -> set[RepairKind]:
    """The kinds of repair a judgment's weights went through (empty: J_W's weights were used as given)."""
    return {kind for kind in map(repair_kind, notes) if kind is not None}


class Negotiator:
    """Asks J_W for the weights of an item once, and shares them with every judgment of that item."""

    def __init__(
        self,
        client: LLMClient,
        tree: Tree,
        prompts: Prompts,
        *,
        sampling: SamplingParams | None = None,
        reasks: int = 2,
        explanation_max_chars: int | None = None,
    ) -> None:
        self.client, self.tree, self.prompts = client, tree, prompts
        self.sampling = sampling or SamplingParams(temperature=0.0, max_tokens=AUTHORS_MAX_TOKENS)
        self.reasks = reasks
        self.explanation_max_chars = explanation_max_chars
        self._memo: dict[tuple[str, int, float | None], Negotiation] = {}
        self._locks: dict[tuple[str, int, float | None], asyncio.Lock] = {}
        self.calls = 0

    async def weights(
        self, item: Item, *, sample_index: int = 0, temperature: float | None = None
    ) -> tuple[Negotiation, bool]:
        """The item's negotiation and whether this call produced it (False: shared from the memo).

        `temperature` overrides the default sampling (used with distinct `sample_index` values to draw samples).
        """
        key = (item.id, sample_index, temperature)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key in self._memo:
                return self._memo[key], False
            sampling = self.sampling if temperature is None else self.sampling.model_copy(
                update={"temperature": temperature})
            negotiation = await self._negotiate(item, sample_index, sampling)
            self._memo[key] = negotiation
            return negotiation, True

    async def sample(self, item: Item, n: int, *, temperature: float = 0.7) -> tuple[list[Negotiation], bool]:
        """n independently sampled weight sets for one item (negotiation-inconsistency analysis), memoised.

        Returns the samples and whether this call produced any of them."""
        results = await gather_or_cancel(
            *(self.weights(item, sample_index=i, temperature=temperature) for i in range(n))
        )
        return [negotiation for negotiation, _ in results], any(fresh for _, fresh in results)

    async def _negotiate(self, item: Item, sample_index: int, sampling: SamplingParams) -> Negotiation:
        nodes = self.tree.negotiated_nodes(item.task)
        if not nodes:
            return Negotiation(weights={}, sample_index=sample_index)
        prompts = self.prompts
        messages = list(prompts.weights_messages(item, nodes))
        sent: list[ChatResult] = []

        async def send(extra: list[dict[str, str]]) -> ChatResult:
            sent.append(await self._ask(nodes, [*messages, *extra], prompts.hash, sample_index, sampling))
            return sent[-1]

        async def refusal_of(result: ChatResult) -> tuple[str, str] | None:
            if not result.ok or result.data is None:
                return None  # no weights at all: recorded below, not asked again
            broken = [p for node in nodes for p in problems(node, result.data.get(node.id))]
            return (result.text or "", "; ".join(broken)) if broken else None

        asked = await ask_until_accepted(send, refusal_of, self.reasks)
        result, keys, usage = asked.reply, tuple(r.cache_key for r in sent), sum((r.usage for r in sent), Usage())
        if not result.ok or result.data is None:
            return Negotiation(None, error=f"weights: {result.error}", raw_text=result.raw_text,
                               cache_keys=keys, usage=usage, sample_index=sample_index)
        weights, repairs = self._settle(nodes, result.data, asked.refusal is not None)
        return Negotiation(weights, tuple(repairs), raw_text=result.raw_text, cache_keys=keys,
                           usage=usage, sample_index=sample_index)

    def _settle(self, nodes: tuple[Node, ...], data: dict[str, Any], broken: bool) -> tuple[Weights, list[str]]:
        weights: Weights = {}
        repairs: list[str] = []
        for node in nodes:
            given = data.get(node.id)
            if problems(node, given) or not isinstance(given, dict):
                weights[node.id], note = repair_weights(node, given)
                repairs.append(note)
            else:
                weights[node.id], rescale_note = rescale(node, given)
                repairs += [rescale_note] if rescale_note else []
        if broken:
            repairs.insert(0, f"constraints still broken after {self.reasks} re-ask(s)")
        return weights, repairs

    async def _ask(
        self,
        nodes: tuple[Node, ...],
        messages: list[dict[str, str]],
        template_version: str,
        sample_index: int,
        sampling: SamplingParams,
    ) -> ChatResult:
        self.calls += 1
        request = ChatRequest(
            messages=tuple(messages),
            sampling=sampling,
            response_schema=capped(weights_schema(nodes), EXPLANATION, self.explanation_max_chars),
            schema_name="weights",
            purpose="weights",
            template_version=template_version,
            sample_index=sample_index,
        )
        return await self.client.chat(request)


async def sample_weights(
    client: LLMClient, item: Item, n: int, *, tree: Tree | None = None, temperature: float = 0.7, reasks: int = 2,
    prompt_language: str = DEFAULT_PROMPT_LANGUAGE,
) -> list[Negotiation]:
    """n sampled weight sets J_W gives one item (for the negotiation-inconsistency analysis of section 5.3).

    Each sample is its own cached call (`sample_index` 0..n-1), so re-running the analysis costs nothing.
    """
    spec = tree or default_tree()
    prompts = Prompts(spec, prompt_language)
    samples, _ = await Negotiator(client, spec, prompts, reasks=reasks).sample(item, n, temperature=temperature)
    return samples
