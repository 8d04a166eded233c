"""ToW as slime's reward (THUDM/slime): a custom reward function for `--custom-rm-path`, per sample or per group.

slime has two ways in (`slime/rollout/rm_hub/__init__.py`):

- `--rm-type remote_rm --rm-url http://host:port/slime`: slime posts `{"prompt", "response", "label"}` per sample to
  a running `howtobench serve` and keeps the JSON answer as the sample's reward; `--reward-key reward` picks the
  number out of it (`Sample.get_reward_value`). No code of ours runs in slime's process.
- `--custom-rm-path howtobench.rl.slime.group_reward --group-rm`: slime awaits `group_reward(args, samples)` with
  the n rollouts of one prompt at once; they go to the server in one request (`--rm-url`, or
  $HOWTOBENCH_REWARD_URL), so the group's weights are asked once. Without `--group-rm`, slime awaits
  `reward(args, sample)` per sample. To judge in slime's own process instead, make a function with the judge's
  settings in a module of yours: `my_rm = howtobench.rl.slime.group_reward_function(judge_base_url=..., ...)`.

Each returns a float per sample, or with `--reward-key` a dict holding the reward under that key and the logs of
`serve/answers.py` beside it (never NaN). slime builds tensors of the rewards, so a failed sample gets its group's
substitute (`--failed-reward group-mean`, the default): zero advantage under slime's GRPO, flagged in the dict.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from howtobench.config import REWARD_URL_ENV, env
from howtobench.errors import ConfigError
from howtobench.rl.scorers import background, scorer_for
from howtobench.rl.trl import text_of
from howtobench.serve.answers import sample_logs

GroupReward = Callable[..., Awaitable[list[Any]]]


def sample_of(sample: Any) -> dict[str, Any]:
    """The `/v1/score` sample of one slime `Sample` (its `prompt` a string or chat messages, `label` ours)."""
    return {"response": str(sample.response), "label": sample.label or None, "prompt": text_of(sample.prompt)}


def slime_reward(result: dict[str, Any], names: Sequence[str], reward_key: str | None) -> Any:
    """A float, or with `--reward-key` a dict with the reward under that key and the sample's logs."""
    if result["reward"] is None:
        raise ConfigError(f"howtobench: no reward for a sample ({result.get('error')}) and slime cannot train on "
                          "a missing one: do not run the server with --failed-reward none")
    if not reward_key:
        return float(result["reward"])
    return {reward_key: float(result["reward"]), **sample_logs(result, names)}


def group_reward_function(**settings: Any) -> GroupReward:
    """`group_reward` over these adapter settings (those of `howtobench.rl.arguments.RewardArguments`)."""

    async def group_reward(args: Any, samples: list[Any], **_kwargs: Any) -> list[Any]:
        given = dict(settings)
        if not given.get("judge_base_url") and not given.get("reward_url"):
            url = getattr(args, "rm_url", None) or env(REWARD_URL_ENV)
            if not url:
                raise ConfigError(f"howtobench: give slime --rm-url (a running `howtobench serve`) or "
                                  f"${REWARD_URL_ENV}")
            given["reward_url"] = url
        answer = await background().arun(scorer_for(given).score([sample_of(s) for s in samples]))
        key = getattr(args, "reward_key", None)
        return [slime_reward(r, answer["names"], key) for r in answer["results"]]

    return group_reward


group_reward = group_reward_function()
"""slime's `--custom-rm-path` with `--group-rm`: a group's rollouts in one request to the server at --rm-url."""


async def reward(args: Any, sample: Any, **kwargs: Any) -> Any:
    """slime's `--custom-rm-path` without `--group-rm`: one sample."""
    return (await group_reward(args, [sample], **kwargs))[0]
