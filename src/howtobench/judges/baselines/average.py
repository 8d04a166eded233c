"""Average scoring (method "average", Table 3 "ToW w/o plan"): stored ToW leaves with uniform edge weights.

No model call (its cost is the ToW leaf calls it re-uses, `meta["reused_usage"]`, which `meta correlate` bills):
each ToW judgment's leaf scores are re-aggregated by the same tree code with every
negotiated node's weights set to 1/n, so the only difference from ToW is the plan (J_W's weights).
With the paper's tree (Format averaged, root weighted by leaf counts) this is the plain mean of the leaves.
A ToW judgment with a failed leaf gives a failed average (unless `renormalize`), and an empty one stays empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.aggregate import aggregate
from howtobench.judges.base import Judgment, Status, register_judge
from howtobench.judges.runner import failed_judgment, read_judgments
from howtobench.judges.tree import Tree, load_tree
from howtobench.llm.types import LLMClient, Usage

METHOD = "average"
SOURCE = "tow"  # the method whose stored judgments this one re-aggregates


def uniform_weights(tree: Tree, task: str) -> dict[str, dict[str, float]]:
    """1/n on every edge of every negotiated node of the task."""
    return {n.id: {leaf.id: 1 / len(n.leaves) for leaf in n.leaves} for n in tree.negotiated_nodes(task)}


def average_from_tow(judgment: Judgment, tree: Tree | None = None, *, renormalize: bool = False) -> Judgment:
    """The average-scoring judgment of one stored ToW judgment (same item, model, leaves; uniform weights)."""
    if judgment.method != SOURCE:
        raise JudgeError(f"average scoring needs a ToW judgment, got method {judgment.method!r}")
    spec = tree or load_tree()
    if judgment.tree_hash and judgment.tree_hash != spec.hash:
        raise JudgeError(f"ToW judgment {judgment.item_id}/{judgment.model} used tree {judgment.tree_hash[:12]}, "
                         f"not {spec.hash[:12]}: pass the same tree")
    scores = {leaf.name: leaf.score for leaf in judgment.leaves}
    result = aggregate(spec, judgment.task, scores, uniform_weights(spec, judgment.task), renormalize=renormalize)
    status: Status = "empty" if judgment.status == "empty" and result.root is not None else result.status
    return Judgment(
        method=METHOD, item_id=judgment.item_id, model=judgment.model, task=judgment.task, genre=judgment.genre,
        score=result.root, status=status, nodes=result.nodes, leaves=judgment.leaves,
        weights={leaf: w for ws in uniform_weights(spec, judgment.task).values() for leaf, w in ws.items()},
        failures=list(result.notes), judge_model=judgment.judge_model, tree_hash=spec.hash,
        prompt_hash=judgment.prompt_hash, usage=Usage(), cache_keys=judgment.cache_keys,
        reference_source=judgment.reference_source,  # the re-used leaves were judged against it
        meta={"from_tow_score": judgment.score, "renormalize": renormalize, **reused_usage(judgment)},
    )


def reused_usage(judgment: Judgment) -> dict[str, Any]:
    """The ToW leaf calls average scoring re-uses, as its cost (Table 3 bills it $7.02 next to ToW's $7.34: the
    leaves without J_W). Nothing is spent again, so the judgment's own `usage` stays empty; a ToW judgment written
    before its leaf usage was recorded gives none (the cost is then unknown, not 0)."""
    leaf_usage = judgment.meta.get("leaf_usage")
    return {"reused_usage": Usage.model_validate(leaf_usage).model_dump()} if isinstance(leaf_usage, dict) else {}


class AverageJudge:
    """Looks up each writing's stored ToW judgment and re-aggregates it.

    A writing without a stored judgment gets a failed judgment saying so: a fact about that writing (the ToW
    run did not cover it), not a reason to stop the others."""

    method = METHOD

    def __init__(self, tow_results: Path, *, tree: Tree | str | Path = "default", renormalize: bool = False) -> None:
        self.tree = tree if isinstance(tree, Tree) else load_tree(tree)
        self.renormalize = renormalize
        stored = read_judgments(Path(tow_results)).values()
        self.stored = {(j.item_id, j.model): j for j in stored if j.method == SOURCE}
        if not self.stored:
            raise JudgeError(f"no ToW judgments in {tow_results}: run `howtobench judge --method tow` first")

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        found = self.stored.get((item.id, writing.model))
        if found is None:
            return failed_judgment(self, item, writing, JudgeError(f"no ToW judgment for item {item.id} by "
                                                                   f"{writing.model} in the --from file"))
        return average_from_tow(found, self.tree, renormalize=self.renormalize)


@register_judge(METHOD, takes=AverageJudge, calls_model=False, rejudges=SOURCE,
                description="ToW leaves re-aggregated with uniform weights, no call (needs --from TOW.jsonl)")
def make_average(*, client: LLMClient | None = None, tow_results: Path | None = None, **options: Any) -> AverageJudge:
    """Factory for `--method average --from TOW.jsonl`; options: tree, renormalize. Needs no model."""
    if tow_results is None:
        raise JudgeError("average scoring re-aggregates stored ToW judgments: pass --from TOW_RESULTS.jsonl")
    return AverageJudge(Path(tow_results), **options)
