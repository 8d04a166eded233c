"""OpenRLHF 0.11.2's released rollout, experience and advantage code against `howtobench serve` and a fake judge.

What runs as released: `RolloutRayActor.generate_responses` with `SingleTurnAgentExecutor` (the remote reward
client: decode prompt + response tokens, POST /get_reward, read rewards / scores / extra_logs), on Ray;
`SamplesGenerator._generate_vllm` (Experience building, `torch.tensor` of every reward and log, dynamic filtering);
`RemoteExperienceMaker.make_experience_batch` (KL, advantages; GRPO's `group_norm`) with the arguments parsed by
OpenRLHF's own command-line parser. Stood in for: vLLM's engine (canned response tokens) and the actor model's
forward pass (zero log-probs) — the GPU parts. Each scenario completes its step, every reward is a number, a
substituted sample's advantage is exactly zero, and the judge's calls are exactly 1 + 7n per judged group."""

from __future__ import annotations

import inspect
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("openrlhf")
ray = pytest.importorskip("ray")

import gpu_stubs  # noqa: E402
import torch  # noqa: E402
from trainer_helpers import judge, tiny_tokenizer  # noqa: E402

with gpu_stubs.installed():
    from openrlhf.cli import train_ppo_ray
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker
    from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from openrlhf.utils.config import hierarchize

from reward_serving import ServeProcess, serve_args  # noqa: E402

N = 8  # rollouts per prompt
TESTS = Path(__file__).parents[1]


def openrlhf_args(*argv: str) -> Any:
    """The arguments as `python -m openrlhf.cli.train_ppo_ray ...` parses them (its own parser, its defaults)."""
    source = inspect.getsource(train_ppo_ray)
    block = source[source.index('if __name__ == "__main__":'):source.index("    args = parser.parse_args()")]
    scope = dict(vars(train_ppo_ray))
    exec(textwrap.dedent(block.split("\n", 1)[1]), scope)  # noqa: S102 - OpenRLHF's parser as it builds it
    return hierarchize(scope["parser"].parse_args(list(argv)))


class CpuRollout(RolloutRayActor.__ray_metadata__.modified_class.__bases__[0]):  # type: ignore[misc]
    """OpenRLHF's rollout actor as released, but for the vLLM engine: `generate` answers canned response tokens."""

    def __init__(self, remote_rm_url: str) -> None:  # the released __init__ starts vLLM (a GPU)
        self.executor = SingleTurnAgentExecutor(remote_rm_url)
        self.tokenizer = tiny_tokenizer()
        self.made = 0

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        self.made += 1
        text = f"# 标题\n\n正文{os.getpid()}{self.made}，很美丽。\n\n结尾。<|im_end|>"
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, finish_reason="stop", logprobs=None)])

    def get_num_unfinished_requests(self) -> int:
        return 0

    def point_to(self, remote_rm_url: str) -> None:
        """A new reward server (the tests reuse the actors: starting one imports torch and OpenRLHF again)."""
        self.executor = SingleTurnAgentExecutor(remote_rm_url)


class ZeroLogProbActors:
    """The actor model group's forward pass (a GPU's work) as zero log-probs, through Ray as OpenRLHF reads it."""

    def async_run_method_batch(self, method_name: str, **kwargs: Any) -> list[Any]:
        assert method_name == "forward"
        return [ray.put([torch.zeros(mask.shape, dtype=torch.float32) for mask in kwargs["action_mask"]])]


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[Any]]:
    """A local Ray cluster and two rollout actors on it (OpenRLHF's vLLM engines)."""
    path = os.pathsep.join([str(TESTS / "trainers"), str(TESTS), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}, "worker_process_setup_hook": "gpu_stubs.install"})
    try:
        yield [ray.remote(CpuRollout).options(max_concurrency=1000).remote("unset") for _ in range(2)]
    finally:
        ray.shutdown()


def step(engines: list[Any], url: str, prompts: list[str], *argv: str, max_len: int = 2048
         ) -> tuple[list[Any], list[Any]]:
    """One rollout + experience step: (experiences after the advantage step, the accepted rollouts)."""
    args = openrlhf_args("--reward.remote_url", url + "/get_reward", "--rollout.n_samples_per_prompt", str(N),
                         "--algo.advantage.estimator", "group_norm", "--rollout.micro_batch_size", "4", *argv)
    tok = tiny_tokenizer()
    ray.get([engine.point_to.remote(url + "/get_reward") for engine in engines])
    labels = [f'{{"instruction": "{p[:20]}"}}' for p in prompts]
    batches = iter([(None, prompts, labels, [None] * len(prompts))])
    generator = SamplesGenerator(SimpleNamespace(args=args), None, None, tok, engines)
    rollouts, _, _ = generator._generate_vllm(batches, len(prompts), args.algo.dynamic_filtering_enable,
                                              n_samples_per_prompt=N, max_new_tokens=40, max_len=max_len)
    maker = RemoteExperienceMaker(ZeroLogProbActors(), None, None, None, FixedKLController(0.0),
                                  SimpleNamespace(args=args), tok)
    return (maker.make_experience_batch(rollouts) if rollouts else []), rollouts


def prompts_of(groups: int) -> list[str]:
    return [f"写一篇关于春天的文章{k}" for k in range(groups)]


def check(experiences: list[Any]) -> tuple[int, int]:
    """Every reward a number, no NaN logged, every substituted sample's advantage 0: (samples, substituted)."""
    samples = substituted = 0
    for exp in experiences:
        assert exp.rewards is not None and not torch.isnan(exp.rewards).any()
        for key, value in exp.info.items():
            assert not torch.isnan(torch.as_tensor(value, dtype=torch.float64)).any(), key
        flags = exp.info["howtobench/substituted"].flatten()
        for row, flag in enumerate(flags):
            samples += 1
            if flag == 1.0:
                substituted += 1
                assert float(exp.advantages[row].abs().max()) == 0.0
    return samples, substituted


def test_healthy_judge_32_groups_of_8(cluster: list[Any], tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws", "--group-size", str(N)),
                                       drain=True) as served:
        experiences, rollouts = step(cluster, served.url, prompts_of(32))
        calls = fake.calls()
    assert len(rollouts) == 32 * N and check(experiences) == (32 * N, 0)
    assert len(calls) == 32 * (1 + 7 * N)
    assert any(float(exp.advantages.abs().max()) > 0 for exp in experiences)


def test_a_judge_down_2_s_mid_step(cluster: list[Any], tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws"), drain=True) as served:
        fake.down_for(2.0, after_calls=20)
        experiences, rollouts = step(cluster, served.url, prompts_of(4))
        calls = fake.calls()
    assert fake.outage is not None and fake.outage[1] - fake.outage[0] >= 2.0
    assert len(rollouts) == 4 * N and check(experiences) == (4 * N, 0)  # every reward judged, none substituted
    assert len(calls) >= 4 * (1 + 7 * N)  # a call cut when the judge died is sent again; none answered twice
    assert len({str(c["messages"]) for c in calls}) == 4 * (1 + 7 * N)


def test_a_garbage_judge_gives_constant_groups_that_dynamic_filtering_drops(cluster: list[Any], tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws"), drain=True) as served:
        fake.garbage()
        experiences, rollouts = step(cluster, served.url, prompts_of(2))
        assert len(rollouts) == 2 * N and check(experiences) == (2 * N, 2 * N)
        assert all(float(exp.rewards.abs().max()) == 0.0 for exp in experiences)
        dropped, kept = step(cluster, served.url, prompts_of(2), "--algo.dynamic_filtering_enable")
    assert dropped == [] and kept == []  # every group's mean score 0: outside (0, 1), filtered out


def test_a_left_truncated_prompt_is_substituted_and_its_group_dropped(cluster: list[Any], tmp_path: Path) -> None:
    long = "写一篇关于春天的文章" * 6  # past max_len - max_new_tokens: OpenRLHF keeps its last tokens only
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws"), drain=True) as served:
        experiences, rollouts = step(cluster, served.url, [*prompts_of(2), long], max_len=80)
        assert len(rollouts) == 3 * N and check(experiences) == (3 * N, N)
        _, kept = step(cluster, served.url, [*prompts_of(2), long], "--algo.dynamic_filtering_enable", max_len=80)
    assert len(kept) == 2 * N and all(e.prompts[0] != long and float(e.scores.min()) > 0 for e in kept)
