"""ToW as an async reward function for TRL's GRPOTrainer.

TRL awaits an async reward function on its own loop with `prompts`, `completions`, `completion_ids` and every
dataset column as a keyword list (`trl/trainer/grpo_trainer.py`, `_calculate_rewards`), plus `trainer_state`,
`log_extra` and `log_metric`. It takes a list of floats, `None` for a sample without a reward (TRL leaves such a
sample out of its group's baseline and gives it no advantage: no number is made up).

    from howtobench.rl.trl import reward_function
    trainer = GRPOTrainer(..., reward_funcs=[reward_function(reward_url="http://127.0.0.1:8000")])

The label of each sample is the dataset column `label_column` ("label" by default: `guide/infer_354` or an
object with an instruction); without it the prompt is the instruction, judged reference-free. The means of the
root, every node and every leaf are logged through `log_metric`, each sample's failure through `log_extra`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from howtobench.rl.scorers import background, check_arguments, scorer_for
from howtobench.serve.answers import PREFIX, sample_logs

RewardFunc = Callable[..., Awaitable[list[float | None]]]


def text_of(value: Any) -> str | None:
    """The text of a prompt or completion: a string, or the last message's content of a conversation."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Sequence) and value and isinstance(value[-1], dict):
        return str(value[-1].get("content", ""))
    raise TypeError(f"a prompt or completion is a string or a list of messages, not {type(value).__name__}")


def reward_function(*, label_column: str = "label", name: str = "howtobench_tow", **settings: Any) -> RewardFunc:
    """An async TRL reward function over `howtobench serve` (`reward_url=` or $HOWTOBENCH_REWARD_URL) or judging
    in-process (`judge_base_url=`, `judge_model=`, ...: `howtobench.rl.scorers`)."""
    check_arguments(settings)

    async def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        labels = kwargs.get(label_column) or [None] * len(completions)
        samples = [{"response": text_of(c) or "", "label": label or None, "prompt": text_of(p)}
                   for p, c, label in zip(prompts, completions, labels, strict=True)]
        answer = await background().arun(scorer_for(settings).score(samples))
        results = answer["results"]
        _log(results, answer["names"], kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [trl_reward(r) for r in results]

    reward.__name__ = reward.__qualname__ = name  # TRL names the reward's logged columns after the function
    return reward


def trl_reward(result: dict[str, Any]) -> float | None:
    """The sample's own reward, None when it has none: TRL takes None (a substitute from the server's
    `--failed-reward` is dropped here, said in `log_extra`'s failure column)."""
    if result["reward"] is None or result.get("substituted") is not None:
        return None
    return float(result["reward"])


def _log(results: list[dict[str, Any]], names: Sequence[str], log_metric: Any, log_extra: Any) -> None:
    if callable(log_metric):
        per_sample = [sample_logs(r, names) for r in results]
        for key in per_sample[0] if per_sample else []:
            values = [logs[key] for logs in per_sample if not math.isnan(logs[key])]
            if values:
                log_metric(key, sum(values) / len(values))
    if callable(log_extra):
        log_extra(PREFIX + "failure", [r.get("error") or (r.get("guard") or {}).get("reason") or "" for r in results])


tow_reward = reward_function()
"""The reward function with the defaults: `howtobench serve` at $HOWTOBENCH_REWARD_URL, labels in "label"."""
