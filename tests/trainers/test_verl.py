"""verl 0.9.1's reward path as released: `RewardLoopManager` starting its `RewardLoopWorker`s on Ray, the config
composed by Hydra from verl's own `ppo_trainer.yaml` with the overrides **read from docs/rl.md's verl recipe** (so
the doc cannot drift from what verl accepts), the reward URL swapped for a running `howtobench serve`; then verl's
GRPO advantage (`compute_grpo_outcome_advantage`) on the rewards it assembled. Scenarios: a healthy judge (32 groups
x 8), a judge down 2 s mid-step, a judge answering garbage. Each step completes, every reward is a number, every
logged key is free of NaN, a substituted sample's advantage is exactly zero, and the judge's calls are exactly
1 + 7n per judged group. (verl hands the reward function the decoded response alone, so a left-truncated prompt
cannot reach it.)"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("verl")
ray = pytest.importorskip("ray")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from trainer_helpers import judge, tiny_tokenizer  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.reward_loop import RewardLoopManager  # noqa: E402
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage  # noqa: E402

from reward_serving import ServeProcess, serve_args  # noqa: E402

N = 8
DOC = Path(__file__).parents[2] / "docs" / "rl.md"
SRC = Path(__file__).parents[2] / "src"


def documented_overrides() -> list[str]:
    """The `key=value` overrides of docs/rl.md's verl command (its `...` and the module name left out)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## verl\n"):text.index("\n## ", text.index("## verl\n") + 1)]
    block = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)[0]
    return [a for a in shlex.split(block.replace("\\\n", " ")) if "=" in a]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        yield
    finally:
        ray.shutdown()


def verl_config(url: str, tokenizer_dir: Path) -> Any:
    import verl

    overrides = [o.replace("http://reward-host:5000", url) for o in documented_overrides()]
    assert "reward.custom_reward_function.path=pkg://howtobench.rl.verl" in overrides
    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=[
            *overrides, f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=2"])


def batch(tok: Any, groups: int) -> DataProto:
    """A rollout batch as verl's agent loop hands it to the reward loop: prompt and response token ids, the
    attention mask, and each row's data_source, reward_model.ground_truth and extra_info; `uid` names its group."""
    prompts, responses, labels, uids = [], [], [], []
    for g in range(groups):
        for k in range(N):
            prompts.append(tok(f"写一篇关于春天的文章{g}", add_special_tokens=False)["input_ids"])
            responses.append(tok(f"# 标题\n\n正文{g}段{k}，很美丽。\n\n结尾。", add_special_tokens=False)["input_ids"])
            labels.append(f'{{"instruction": "写一篇关于春天的文章{g}"}}')
            uids.append(f"group-{g}")
    plen, rlen = max(map(len, prompts)), max(map(len, responses))
    prompt_ids = torch.tensor([[0] * (plen - len(p)) + p for p in prompts])
    response_ids = torch.tensor([r + [0] * (rlen - len(r)) for r in responses])
    mask = torch.tensor([[0] * (plen - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (rlen - len(r))
                         for p, r in zip(prompts, responses, strict=True)])
    return DataProto.from_dict(
        tensors={"prompts": prompt_ids, "responses": response_ids, "attention_mask": mask,
                 "input_ids": torch.cat([prompt_ids, response_ids], dim=1)},
        non_tensors={"data_source": np.array(["howtobench"] * len(labels), dtype=object),
                     "reward_model": np.array([{"ground_truth": label} for label in labels], dtype=object),
                     "extra_info": np.array([{"index": i} for i in range(len(labels))], dtype=object),
                     "uid": np.array(uids, dtype=object)})


def reward_step(url: str, tmp_path: Path, groups: int) -> tuple[DataProto, torch.Tensor, torch.Tensor]:
    tok = tiny_tokenizer()
    tok.save_pretrained(tmp_path / "tokenizer")
    manager = RewardLoopManager(verl_config(url, tmp_path / "tokenizer"))
    data = batch(tok, groups)
    scored = manager.compute_rm_score(data)
    for worker in manager.reward_loop_workers:
        ray.kill(worker)
    response_mask = data.batch["attention_mask"][:, data.batch["prompts"].size(1):]
    advantages, _ = compute_grpo_outcome_advantage(scored.batch["rm_scores"], response_mask,
                                                   data.non_tensor_batch["uid"])
    return scored, advantages, response_mask


def check(scored: DataProto, advantages: torch.Tensor) -> int:
    """No NaN anywhere verl logs; each substituted sample's advantage zero. Returns the substituted count."""
    assert not torch.isnan(scored.batch["rm_scores"]).any()
    for key in scored.meta_info["reward_extra_keys"]:
        assert not np.isnan(scored.non_tensor_batch[key].astype(float)).any(), key
    substituted = scored.non_tensor_batch["howtobench/substituted"].astype(float)
    for row in np.flatnonzero(substituted == 1.0):
        assert float(advantages[row].abs().max()) == 0.0
    return int(substituted.sum())


def test_healthy_judge_32_groups_of_8(cluster: None, tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws", "--group-size", str(N)),
                                       drain=True) as served:
        scored, advantages, _ = reward_step(served.url, tmp_path, 32)
        calls = fake.calls()
    assert check(scored, advantages) == 0 and len(calls) == 32 * (1 + 7 * N)
    assert float(advantages.abs().max()) > 0


def test_a_judge_down_2_s_mid_step(cluster: None, tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws"), drain=True) as served:
        fake.down_for(2.0, after_calls=20)
        scored, advantages, _ = reward_step(served.url, tmp_path, 4)
        calls = fake.calls()
    assert fake.outage is not None and check(scored, advantages) == 0
    assert len({str(c["messages"]) for c in calls}) == 4 * (1 + 7 * N)


def test_a_garbage_judge_gives_constant_groups_with_zero_advantage(cluster: None, tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws"), drain=True) as served:
        fake.garbage()
        scored, advantages, _ = reward_step(served.url, tmp_path, 2)
    assert check(scored, advantages) == 2 * N and float(advantages.abs().max()) == 0.0
