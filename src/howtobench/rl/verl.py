"""ToW as verl's custom reward function: `compute_score_async` (verl's reward loop awaits it once per sample) and
`compute_score` (the same, for a reward manager that runs a plain function in its executor threads).

verl calls them as its code does (`verl/experimental/reward_loop/reward_manager/naive.py`, `run_single`): keyword
arguments `data_source`, `solution_str` (the decoded response), `ground_truth` (the row's
`reward_model.ground_truth`: our label, `guide/infer_354` or an object with an instruction), `extra_info`, and the
config's `reward.custom_reward_function.reward_kwargs` merged in (`reward_url`, or the judge settings to judge
in-process: `howtobench.rl.arguments.RewardArguments`). An empty label judges reference-free with
`extra_info["prompt"]` as the instruction. (verl 0.6 and earlier spell the config `custom_reward_function.*`;
docs/rl.md has the table. There is no batch function: since verl 0.9 its batch reward manager has no caller.)

Each returns `{"score": reward, "howtobench/root": ..., ...}`: verl takes "score" as the reward and logs the mean of
the other keys, so every answer has the same keys, never NaN (`serve/answers.py`). verl builds a tensor of the
rewards and cannot take a missing one: a failed sample gets its substitute (`failed_reward`, group-mean by
default, flagged under `howtobench/substituted`); with `failed_reward=none` it raises `NoReward` with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from howtobench.errors import HowtobenchError
from howtobench.rl.scorers import background, scorer_for
from howtobench.serve.answers import sample_logs


class NoReward(HowtobenchError):
    """A sample has no reward and verl cannot train on a missing one."""


def sample_of(solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None) -> dict[str, Any]:
    """The `/v1/score` sample of one verl row."""
    prompt = (extra_info or {}).get("prompt")
    return {"response": solution_str, "label": ground_truth or None,
            "prompt": prompt if isinstance(prompt, str) else None}


def verl_reward(result: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """verl's reward dict of one result; `NoReward` when the sample has none."""
    if result["reward"] is None:
        error = result.get("error")
        raise NoReward(f"howtobench: no reward for a sample ({error}); verl cannot train on a missing reward: "
                       + _advice(error))
    return {"score": float(result["reward"]), **sample_logs(result, names)}


def _advice(error: Any) -> str:
    """What to do about a missing reward. A server already run with `--failed-reward group-mean` says so in the
    error ("group-mean: no sample of its group was judged"): advising that flag again helped no one."""
    if isinstance(error, str) and "group-mean:" in error:
        return ("group-mean is already on, but no sample of this one's group was judged (a label that names no item "
                "has no group): fix the label, or give a number instead (`--failed-reward 0`, failed_reward=0)")
    return "leave --failed-reward (or failed_reward in reward_kwargs) at group-mean"


def _rewards(answer: dict[str, Any]) -> list[dict[str, float]]:
    return [verl_reward(result, answer["names"]) for result in answer["results"]]


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  **reward_kwargs: Any) -> dict[str, float]:
    """The reward of one response (blocks until judged; verl runs it in an executor thread)."""
    scorer = scorer_for(reward_kwargs)
    answer = background().run(scorer.score([sample_of(solution_str, ground_truth, extra_info)]))
    return _rewards(answer)[0]


async def compute_score_async(data_source: str, solution_str: str, ground_truth: Any,
                              extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> dict[str, float]:
    """`compute_score` for verl's reward loop, which awaits one coroutine per sample."""
    scorer = scorer_for(reward_kwargs)
    answer = await background().arun(scorer.score([sample_of(solution_str, ground_truth, extra_info)]))
    return _rewards(answer)[0]
