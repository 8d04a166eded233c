"""The two answer shapes: OpenRLHF's `/get_reward` and our own `/v1/score` (docs/rl.md describes both).

OpenRLHF turns every value under `extra_logs` into a tensor (`torch.tensor([value])` in its samples generator),
splits a batch of experiences by the same keys and logs the mean of each key per step; verl collects every key of
a reward dict into one list per key and logs its mean. So the numbers logged per sample (`sample_logs`) always
carry the same keys, and never NaN (one NaN makes the step's mean NaN): for the root, each node and each leaf of
the tree and the response length, `howtobench/<name>` is the value where the sample has one and 0 where it has
not, and `howtobench/present/<name>` is 1 or 0. The mean over the samples that have the value is then
mean(`<name>`) / mean(`present/<name>`), from the logged means alone. `failed` and `substituted` are 0/1. Why a
sample has no reward of its own is said in `failures` (and in `/v1/score`), where text may go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from howtobench.guard.logs import guard_detail, guard_logs, skip_reason
from howtobench.serve.service import Outcome

PREFIX = "howtobench/"
PRESENT = PREFIX + "present/"


def result_of(outcome: Outcome) -> dict[str, Any]:
    """One sample of `/v1/score`: its reward, root, status, nodes, leaves with reasons, weights and error."""
    j = outcome.judgment
    detail: dict[str, Any] = {"reward": outcome.reward, "error": outcome.error, "substituted": outcome.substituted,
                              "response_chars": outcome.response_chars, "guard": guard_detail(j)}
    if j is None:
        return {**detail, "root": None, "status": "failed", "nodes": {}, "leaves": []}
    leaves = [leaf.model_dump(include={"name", "node", "score", "raw_score", "reason", "status", "error"})
              for leaf in j.leaves]
    return {**detail, "root": j.score if j.status != "failed" else None, "status": j.status, "nodes": j.nodes,
            "leaves": leaves, "weights": j.weights, "weight_repairs": j.weight_repairs, "failures": j.failures,
            "item_id": j.item_id, "judge_model": j.judge_model, "tree_hash": j.tree_hash,
            "reference": j.meta.get("reference")}


def score_answer(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, Any]:
    """`{"results": [...], "substituted": n, "names": [...]}`; `names` are the tree's nodes and leaves, the keys
    adapters log for every sample."""
    return {"results": [result_of(o) for o in outcomes], "substituted": sum(o.substituted is not None
                                                                           for o in outcomes),
            "names": list(names)}


def scores_of(result: dict[str, Any]) -> dict[str, float | None]:
    """Root, node and leaf scores of one result (none when its judgment failed)."""
    if result.get("status") == "failed":
        return {}
    leaves = {leaf["name"]: leaf.get("score") for leaf in result.get("leaves") or []}
    return {"root": result.get("root"), **(result.get("nodes") or {}), **leaves}


def sample_logs(result: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """The numbers logged for one sample under fixed keys, none of them NaN (module docstring)."""
    scores: dict[str, float | int | None] = {**scores_of(result), "response_chars": result.get("response_chars")}
    logs: dict[str, float] = {}
    for name in ["root", *names, "response_chars"]:
        value = scores.get(name)
        logs[PREFIX + name] = 0.0 if value is None else float(value)
        logs[PRESENT + name] = float(value is not None)
    logs[PREFIX + "failed"] = float(result.get("error") is not None)
    logs[PREFIX + "substituted"] = float(result.get("substituted") is not None)
    for key, value in guard_logs(result.get("guard"), PREFIX).items():  # the guard's signals, as present/absent
        logs[key] = 0.0 if math.isnan(value) else value
        logs[PRESENT + key.removeprefix(PREFIX)] = float(not math.isnan(value))
    return logs


def get_reward_answer(outcomes: Sequence[Outcome], names: Sequence[str], scale: float) -> dict[str, Any]:
    """`{"rewards", "scores", "extra_logs", "failures", "substituted"}`: rewards are root scores (or their
    substitutes; None only under `--failed-reward none`), scores the same divided by `scale` (OpenRLHF's dynamic
    filtering reads 0-1 scores: an all-failed group's 0 is outside its open range, so the group is dropped)."""
    rewards = [o.reward for o in outcomes]
    per_sample = [sample_logs(result_of(o), names) for o in outcomes]
    keys = list(per_sample[0]) if per_sample else []
    return {
        "rewards": rewards,
        "scores": [None if r is None else r / scale for r in rewards],
        "extra_logs": {key: [logs[key] for logs in per_sample] for key in keys},
        "failures": [o.error or skip_reason(o.judgment) for o in outcomes],
        "substituted": [o.substituted for o in outcomes],
    }


def slime_answer(outcome: Outcome, names: Sequence[str], scale: float) -> dict[str, Any]:
    """slime's remote reward: `{"reward": r, "score": r / scale, "howtobench/...": ...}`. slime keeps the whole
    JSON as the sample's reward and reads `reward[args.reward_key]` (`Sample.get_reward_value`): run it with
    `--reward-key reward`; the other keys are the logs of `sample_logs`, never NaN."""
    result = result_of(outcome)
    reward = outcome.reward
    return {"reward": reward, "score": None if reward is None else reward / scale, **sample_logs(result, names),
            "failure": outcome.error, "substituted_by": outcome.substituted}
