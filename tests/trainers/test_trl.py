"""TRL's released `GRPOTrainer`, two steps on a tiny randomly initialised model and a tokenizer built offline, with
`howtobench.rl.trl.reward_function` over `howtobench serve` and a fake judge: healthy, down for 2 s mid-step, and
answering garbage; and one step of 32 groups x 8. Each run completes its steps; a sample without a reward of its
own is `None`, which TRL leaves out of its group's baseline and gives a zero advantage (read from the trainer's own
advantages)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from trainer_helpers import judge, tiny_model, tiny_tokenizer  # noqa: E402

from howtobench.rl.trl import reward_function  # noqa: E402
from reward_serving import ServeProcess, serve_args  # noqa: E402

INSTRUCTIONS = ["写一篇关于春天的文章", "写一首关于山水的诗"]
N = 4  # num_generations: one GRPO group per step


class Recording(trl.GRPOTrainer):  # type: ignore[misc,name-defined]
    """The released trainer, its advantages kept for the test to read."""

    advantages: list[list[float]]

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        out = super()._generate_and_score_completions(inputs)
        self.advantages.append([float(a) for a in out["advantages"].flatten()])
        return out


def train(url: str, tmp_path: Path, instructions: list[str] = INSTRUCTIONS, n: int = N, steps: int = 2
          ) -> tuple[Recording, list[tuple[list[Any], list[Any], list[Any]]], dict]:
    tok = tiny_tokenizer()
    rows = [{"prompt": text, "label": json.dumps({"instruction": text}, ensure_ascii=False)} for text in instructions]
    func = reward_function(reward_url=url)
    seen: list[tuple[list[Any], list[Any], list[Any]]] = []
    metrics: dict[str, list[float]] = {}

    async def howtobench_tow(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        log_metric = kwargs.get("log_metric")

        def keep(key: str, value: float) -> None:
            metrics.setdefault(key, []).append(value)
            if callable(log_metric):
                log_metric(key, value)

        out = await func(prompts, completions, **{**kwargs, "log_metric": keep})
        seen.append((list(prompts), list(completions), out))
        return out

    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none",
                          per_device_train_batch_size=len(instructions) * n // steps, num_generations=n,
                          max_completion_length=12, max_steps=steps, logging_steps=1, save_strategy="no", seed=0,
                          temperature=1.0)
    trainer = Recording(model=tiny_model(len(tok)), reward_funcs=[howtobench_tow], args=args,
                        train_dataset=datasets.Dataset.from_list(rows), processing_class=tok)
    trainer.advantages = []
    trainer.train()
    return trainer, seen, metrics


@pytest.mark.parametrize("fault", ["healthy", "judge down 2 s", "garbage"])
def test_trl_grpo_trainer_two_steps(fault: str, tmp_path: Path) -> None:
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws", "--deadline", "60"),
                                       drain=True) as served:
        if fault == "garbage":
            fake.garbage()
        elif fault == "judge down 2 s":
            fake.down_for(2.0, after_calls=1)
        trainer, seen, metrics = train(served.url, tmp_path)
        calls = fake.calls()
    assert trainer.state.global_step == 2 and len(trainer.advantages) == 2
    rewards = [r for _, _, out in seen for r in out]
    assert len(rewards) == 2 * N
    assert all(not math.isnan(v) for values in metrics.values() for v in values)
    assert all(not math.isnan(a) for step in trainer.advantages for a in step)
    if fault == "garbage":
        assert rewards == [None] * (2 * N)
        assert all(a == 0.0 for step in trainer.advantages for a in step)  # no signal from a failed judge
        return
    assert None not in rewards
    pairs = judged_pairs(seen)
    groups = {p for p, _ in pairs}
    assert len(calls) == len(groups) + 7 * len(pairs)  # 1 + 7n per group, each call once (outage included)
    if fault == "judge down 2 s":
        assert fake.outage is not None


def test_trl_grpo_trainer_one_step_of_32_groups_of_8(tmp_path: Path) -> None:
    instructions = [f"写一篇关于春天的文章{k}" for k in range(32)]
    with judge() as fake, ServeProcess(serve_args(fake.base_url, tmp_path / "ws", "--group-size", "8"),
                                       drain=True) as served:
        trainer, seen, _ = train(served.url, tmp_path, instructions, n=8, steps=1)
        calls = fake.calls()
    rewards = [r for _, _, out in seen for r in out]
    assert trainer.state.global_step == 1 and len(rewards) == 32 * 8 and None not in rewards
    pairs = judged_pairs(seen)
    assert len(calls) == len({p for p, _ in pairs}) + 7 * len(pairs)
    assert len({json.dumps(c["messages"], ensure_ascii=False) for c in calls}) == len(calls)  # none sent twice


def judged_pairs(seen: list[tuple[list[Any], list[Any], list[Any]]]) -> set[tuple[str, str]]:
    """(prompt, writing) pairs that cost judge calls: a writing is judged as its text without the whitespace around
    it, and an empty one gets the lowest scores without a call."""
    return {(json.dumps(p), c.strip()) for prompts, completions, _ in seen
            for p, c in zip(prompts, completions, strict=True) if c.strip()}
