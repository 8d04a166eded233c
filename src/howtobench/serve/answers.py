"""The two answer shapes: OpenRLHF's `/get_reward` and our own `/v1/score` (docs/rl.md describes both).

OpenRLHF turns every value under `extra_logs` into a tensor (`torch.tensor([value])` in its samples generator)
and splits a batch of experiences by the same keys, so under `extra_logs` every answer carries the same keys
with one number per sample: the root, each node and each leaf of the tree, `failed` and `substituted` (0/1)
and the response length. A value the sample has not got (its judgment failed, or its task has no such node)
is NaN, which Python's JSON reader (OpenRLHF's) and torch take, and which is no score. Why a sample has no
reward is said in `failures` (and in `/v1/score`), where text may go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from howtobench.judges.base import Judgment
from howtobench.serve.service import Outcome

PREFIX = "howtobench/"


def log_names(outcomes: Sequence[Outcome], tree_names: Sequence[str]) -> list[str]:
    """The score names under extra_logs: the tree's (always, in tree order) then any other a judgment has."""
    names = ["root", *tree_names]
    for outcome in outcomes:
        for name in _scores(outcome.judgment):
            if name not in names:
                names.append(name)
    return names


def _scores(judgment: Judgment | None) -> dict[str, float | None]:
    if judgment is None or judgment.status == "failed":
        return {}
    return {"root": judgment.score, **judgment.nodes, **{leaf.name: leaf.score for leaf in judgment.leaves}}


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def get_reward_answer(outcomes: Sequence[Outcome], tree_names: Sequence[str], scale: float) -> dict[str, Any]:
    """`{"rewards", "scores", "extra_logs", "failures", "substituted"}`: rewards are root scores (None when the
    sample has none), scores the same divided by `scale` (OpenRLHF's dynamic filtering reads 0-1 scores)."""
    rewards = [o.reward for o in outcomes]
    scored = [_scores(o.judgment) for o in outcomes]
    logs: dict[str, list[float]] = {
        PREFIX + name: [_number(s.get(name)) for s in scored] for name in log_names(outcomes, tree_names)}
    logs[PREFIX + "failed"] = [float(o.error is not None) for o in outcomes]
    logs[PREFIX + "substituted"] = [float(o.substituted is not None) for o in outcomes]
    logs[PREFIX + "response_chars"] = [_number(o.response_chars) for o in outcomes]
    return {
        "rewards": rewards,
        "scores": [None if r is None else r / scale for r in rewards],
        "extra_logs": logs,
        "failures": [o.error for o in outcomes],
        "substituted": [o.substituted for o in outcomes],
    }


def score_answer(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """`{"results": [...]}`: per sample its reward, root, status, nodes, leaves with reasons, weights, error."""
    return {"results": [_result(o) for o in outcomes],
            "substituted": sum(o.substituted is not None for o in outcomes)}


def _result(outcome: Outcome) -> dict[str, Any]:
    j = outcome.judgment
    detail: dict[str, Any] = {"reward": outcome.reward, "error": outcome.error, "substituted": outcome.substituted}
    if j is None:
        return {**detail, "root": None, "status": "failed" if outcome.error else None}
    leaves = [leaf.model_dump(include={"name", "node", "score", "raw_score", "reason", "status", "error"})
              for leaf in j.leaves]
    return {**detail, "root": j.score, "status": j.status, "nodes": j.nodes, "leaves": leaves, "weights": j.weights,
            "weight_repairs": j.weight_repairs, "failures": j.failures, "item_id": j.item_id,
            "judge_model": j.judge_model, "tree_hash": j.tree_hash, "reference": j.meta.get("reference")}
