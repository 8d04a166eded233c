"""The Tree-of-Writing judge (method "tow"): leaves scored by LLM experts and rules, weights by J_W.

For one writing: the item's edge weights (negotiated once per item, shared across models) and every
leaf of the task's nodes are requested concurrently; the LLM leaves share one prompt prefix so a
prefix-caching server reads the writing once. Each leaf reply is a JSON object: the judge's free analysis
first, then an enum-constrained score. Judge settings default to the authors' (`code/config/settings.yaml`):
temperature 0 and a 4,096-token budget per call. Then `aggregate` computes the nodes and the root. Failures
are recorded with their raw text and leave the root empty (unless `renormalize`); an empty writing gets
every leaf's lowest score without any call (status "empty"), and the leaderboard leaves it out of the means
by default, as the authors do (their pipeline skips empty writings).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from howtobench.concurrency import cancel_and_wait, drain, gather_or_cancel
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError, StopAfterSiblings
from howtobench.judges.aggregate import Aggregate, NodeWeights, aggregate, mean_root
from howtobench.judges.base import Judgment, LeafResult, SampleResult, Status, register_judge, source_if_read
from howtobench.judges.negotiator import Negotiation, Negotiator
from howtobench.judges.prompts import (
    ANALYSIS,
    AUTHORS_MAX_TOKENS,
    DEFAULT_LEAF_LAYOUT,
    DEFAULT_PROMPT_LANGUAGE,
    LeafLayout,
    Prompts,
    capped,
    leaf_schema,
)
from howtobench.judges.tree import Leaf, Tree, load_tree
from howtobench.llm.types import ChatRequest, LLMClient, SamplingParams, Usage


class TreeOfWriting:
    """ToW over one judge model. Pure given (item, writing, settings): all state is in the client's cache."""

    method = "tow"

    def __init__(
        self,
        client: LLMClient,
        *,
        tree: Tree | str | Path = "default",
        with_reference: bool = True,
        renormalize: bool = False,
        samples: int = 1,
        sample_temperature: float = 0.7,
        max_tokens: int = AUTHORS_MAX_TOKENS,
        temperature: float = 0.0,
        reasks: int = 2,
        prompts_dir: Path | None = None,
        analysis_max_chars: int | None = None,
        prompt_language: str = DEFAULT_PROMPT_LANGUAGE,
        leaf_layout: LeafLayout = DEFAULT_LEAF_LAYOUT,
    ) -> None:
        """`analysis_max_chars` caps the free analysis (and the negotiator's explanation) in the reply schema: not
        the paper's setting (no cap), only for judges too small to stop on their own (the embedded smoke model).
        `prompt_language` is the language of every prompt, whatever the item's (English: the authors').
        `leaf_layout` orders a leaf prompt's parts (`judges/prompts.LEAF_LAYOUTS`; "writing-last" is a named option
        for RL groups of short rollouts on a prefix-caching judge)."""
        self.client = client
        self.tree = tree if isinstance(tree, Tree) else load_tree(tree)
        self.with_reference, self.renormalize = with_reference, renormalize
        self.samples, self.sample_temperature = max(1, samples), sample_temperature
        self.sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens)
        self.prompts = Prompts(self.tree, prompt_language, with_reference=with_reference, prompts_dir=prompts_dir,
                               leaf_layout=leaf_layout)
        self.analysis_max_chars = analysis_max_chars
        self.negotiator = Negotiator(client, self.tree, self.prompts, sampling=self.sampling, reasks=reasks,
                                     explanation_max_chars=analysis_max_chars)

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        if writing.is_empty:
            return await self._judge_empty(item, writing)
        leaves = self.tree.leaves_for(item.task)
        order = dispatch_order(leaves)
        weights_job = asyncio.ensure_future(self._negotiations(item))
        try:
            started = await gather_or_cancel(*(self._score_leaf(item, writing, leaves[k]) for k in order))
            negotiations, fresh = await weights_job
        except StopAfterSiblings:  # the weights call still ends by itself (a batch file then holds it too)
            await drain([weights_job])
            raise
        finally:
            await cancel_and_wait([weights_job])  # no-op when done; stops the call if a leaf raised
        scored = [result for _, result in sorted(zip(order, started, strict=True), key=lambda pair: pair[0])]
        usage = sum((u for _, u in scored), Usage())
        return self._record(item, writing, [r for r, _ in scored], negotiations, fresh, usage)

    # ------------------------------------------------------------------ weights

    async def _negotiations(self, item: Item) -> tuple[list[Negotiation], bool]:
        """The weight set(s) for this item: one, or `samples` sampled ones; and whether this call made them."""
        if self.samples == 1:
            negotiation, fresh = await self.negotiator.weights(item)
            return [negotiation], fresh
        return await self.negotiator.sample(item, self.samples, temperature=self.sample_temperature)

    # ------------------------------------------------------------------ leaves

    async def _score_leaf(self, item: Item, writing: Writing, leaf: Leaf) -> tuple[LeafResult, Usage]:
        node = self.tree.node_ids[leaf.id]
        if leaf.scorer.score is not None:  # deterministic: regex-headings judges the writing's own headings (3.2)
            step, why = leaf.scorer.score(writing.output)
            return LeafResult(name=leaf.id, node=node, raw_score=step, score=leaf.score_of(step), reason=why), Usage()
        prompts = self.prompts
        request = ChatRequest(
            messages=prompts.leaf_messages(item, writing.output, leaf),
            sampling=self.sampling,
            response_schema=capped(leaf_schema(leaf, self.tree.reply_of(leaf)), ANALYSIS, self.analysis_max_chars),
            schema_name="leaf_score",
            purpose=f"leaf:{leaf.id}",
            template_version=prompts.hash,
        )
        result = await self.client.chat(request)
        base: dict[str, Any] = {"name": leaf.id, "node": node, "cache_key": result.cache_key,
                                "raw_text": result.raw_text}
        if not result.ok or result.data is None:
            return LeafResult(**base, status="failed", error=result.error or "no reply"), result.usage
        raw: Any = result.data.get("score")
        if not isinstance(raw, int) or isinstance(raw, bool) or raw not in leaf.scale:
            error = f"score {raw!r} is not one of {list(leaf.scale)}"
            return LeafResult(**base, status="failed", error=error), result.usage
        reason = str(result.data.get(ANALYSIS, ""))
        return LeafResult(**base, raw_score=raw, score=leaf.score_of(raw), reason=reason), result.usage

    # ------------------------------------------------------------------ empty writings

    async def _judge_empty(self, item: Item, writing: Writing) -> Judgment:
        """Every leaf at its lowest, no leaf call; weights are asked only if they could change the result."""
        leaves = []
        for node in self.tree.nodes_for(item.task):
            for leaf in node.leaves:
                raw, score = leaf.lowest
                leaves.append(LeafResult(name=leaf.id, node=node.id, raw_score=raw, score=score, status="empty",
                                         reason="empty writing: lowest score without a judge call"))
        needs_weights = any(len({x.lowest[1] for x in n.leaves}) > 1 for n in self.tree.negotiated_nodes(item.task))
        if needs_weights:
            negotiations, fresh = await self._negotiations(item)
        else:  # all leaves of each node share their lowest: any weights summing to 1 give that value
            negotiations, fresh = [Negotiation(weights=None)], False
        return self._record(item, writing, leaves, negotiations, fresh, Usage(), empty=True)

    # ------------------------------------------------------------------ the record

    def _aggregate(self, item: Item, scores: dict[str, float | None], weights: NodeWeights | None,
                   empty: bool) -> Aggregate:
        if empty and weights is None:
            weights = {n.id: {x.id: 1 / len(n.leaves) for x in n.leaves} for n in self.tree.negotiated_nodes()}
        return aggregate(self.tree, item.task, scores, weights or {}, renormalize=self.renormalize)

    def _record(self, item: Item, writing: Writing, leaves: list[LeafResult], negotiations: list[Negotiation],
                fresh: bool, usage: Usage, *, empty: bool = False) -> Judgment:
        scores = {leaf.name: leaf.score for leaf in leaves}
        aggregates = [self._aggregate(item, scores, n.weights, empty) for n in negotiations]
        root, status, samples = self._combine(negotiations, aggregates)
        if root is None:
            status = "failed"
        elif empty:
            status = "empty"
        failures = [f"leaf {x.name}: {x.error}" for x in leaves if x.status == "failed"]
        failures += [n.error for n in negotiations if n.error] + aggregates[0].notes
        leaf_usage = usage  # the leaf calls alone: what average scoring (ToW without the plan) re-uses
        if fresh:  # the shared weights call is accounted once, on the judgment that made it
            usage = usage + sum((n.usage for n in negotiations), Usage())
        return Judgment(
            method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
            score=root, status=status, nodes=aggregates[0].nodes, leaves=leaves, weights=negotiations[0].flat(),
            weight_repairs=[r for n in negotiations for r in n.repairs], failures=failures, samples=samples,
            judge_model=self.client.model, tree_hash=self.tree.hash, prompt_hash=self.prompts.hash,
            prompt_language=self.prompts.language, usage=usage,
            reference_source=source_if_read(item, self.prompts.sees_reference(item)),
            cache_keys=[x.cache_key for x in leaves if x.cache_key] + [k for n in negotiations for k in n.cache_keys],
            meta={"reference": self.with_reference and bool(item.reference.strip()), "language": item.language,
                  "weights_shared": not fresh, "renormalize": self.renormalize,
                  "leaf_usage": leaf_usage.model_dump(),
                  "sample_weights": [n.flat() for n in negotiations] if len(negotiations) > 1 else []},
        )

    def _combine(
        self, negotiations: list[Negotiation], aggregates: list[Aggregate]
    ) -> tuple[float | None, Status, list[SampleResult]]:
        """Root and status: the single aggregate, or with `samples` > 1 the mean root over the weight samples
        (`aggregate.mean_root`); each sample keeps its own node scores, so `meta ablation` can redo it per sample.
        The judgment's `nodes` stay the first sample's (as before), its root is the mean."""
        if len(aggregates) == 1:
            return aggregates[0].root, aggregates[0].status, []
        samples = [
            SampleResult(index=n.sample_index, score=a.root, status=a.status, nodes=a.nodes,
                         error="; ".join(a.notes) or None)
            for n, a in zip(negotiations, aggregates, strict=True)
        ]
        root = mean_root([a.root for a in aggregates], renormalize=self.renormalize)
        complete = all(a.root is not None for a in aggregates)
        status: Status = "ok" if complete and all(a.status == "ok" for a in aggregates) else "renormalized"
        return root, status, samples


def dispatch_order(leaves: Sequence[Leaf]) -> list[int]:
    """The order in which a writing's leaf calls start: every leaf that shares the writing's full prompt prefix
    first, a leaf that hides the reference (the authors' paragraphing) last.

    Why: a prefix-caching server with one slot (llama.cpp) reuses only the previous prompt's prefix; one odd
    prompt in the middle makes the next leaf evaluate the whole reference and writing again.
    """
    return sorted(range(len(leaves)), key=lambda k: leaves[k].reference == "hidden")


# Greedy decoding of the 270M model can fill a free-text field for hundreds of tokens (measured: 414 tokens, ~4
# minutes on a busy machine). On the local judge a reply is capped at 96 tokens and its analysis at 60 characters
# in the schema (`analysis_max_chars`, a smoke-only option: the paper's judge has no cap), and nothing is re-asked
# (neither by the client nor by the weight negotiator: the 270M model rarely gives weights summing to 1 without an
# example to copy, and the paper-faithful prompt shows none); a cut reply is a failed leaf, and the root is
# renormalised over the other leaves and flagged `renormalized`; broken weights are repaired and counted — visible
# in the table, never a made-up score.
SMOKE_JUDGE_OPTIONS: dict[str, Any] = {"max_tokens": 96, "renormalize": True, "analysis_max_chars": 60, "reasks": 0}


@register_judge("tow", takes=TreeOfWriting, scorer=True, paper_scale=True, smoke_options=SMOKE_JUDGE_OPTIONS,
                description="Tree-of-Writing (the paper's judge): weights negotiated per instruction, content / "
                "format / impression leaves, root = (4C + 3F + I) / 8")
def make_tow(*, client: LLMClient | None = None, **options: Any) -> TreeOfWriting:
    """Factory for `--method tow`; options are `TreeOfWriting` keyword arguments (tree, with_reference, ...)."""
    if client is None:
        raise JudgeError("the tow judge needs a judge model endpoint")
    return TreeOfWriting(client, **options)
