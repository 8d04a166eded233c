"""The server judges as many samples at once as the step layer gives its judge (`writings_in_flight`), not every
sample of a trainer's batch at once: the rest wait their turn inside their request, and all come back judged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import howtobench.serve.judging as judging
from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.serve.setup import ServeSettings
from howtobench.steps.client import writings_in_flight
from judge_replies import server_handler
from reward_serving import GUIDE, openrlhf_body, running

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(8)]


async def one_request_of_8(tmp_path: Path, bench_root: Path) -> tuple[int, dict[str, Any], EndpointConfig]:
    """One /get_reward of 8 rollouts to a server whose judge takes 1 call at once (2 samples in flight)."""
    with FakeServer(server_handler()) as server:
        endpoint = EndpointConfig(model="fake-judge", base_urls=(server.base_url,), concurrency=1)
        settings = ServeSettings(endpoint=endpoint, workspace=tmp_path / "ws", data_dir=bench_root)
        async with running(settings) as app:
            status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES, GUIDE))
    return status, answer, endpoint


async def test_samples_are_judged_as_many_at_once_as_the_step_layer_gives(
        tmp_path: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.judge_or_fail
    active = peak = 0

    async def counted(*args: Any) -> Any:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        try:
            await asyncio.sleep(0.02)  # every sample admitted by then would be judging together
            return await real(*args)
        finally:
            active -= 1

    monkeypatch.setattr(judging, "judge_or_fail", counted)
    status, answer, endpoint = await one_request_of_8(tmp_path, bench_root)
    assert status == 200
    assert len(answer["rewards"]) == 8 and all(isinstance(r, float) for r in answer["rewards"])
    assert peak == writings_in_flight(None, endpoint) == 2


async def test_the_guard_checks_a_sample_once_it_is_let_in_not_on_arrival(
        tmp_path: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trainer's batch checked on arrival was checked whole (~0.3 ms a writing) before its first judge call went
    out; checked at the gate, the samples waiting their turn have not been checked while the first are judged."""
    real_judge, real_check = judging.judge_or_fail, judging.Guard.check
    checked_while_judging: list[int] = []
    checks = 0

    def counted_check(self: Any, *args: Any) -> Any:
        nonlocal checks
        checks += 1
        return real_check(self, *args)

    async def judged(*args: Any) -> Any:
        judgment = await real_judge(*args)
        checked_while_judging.append(checks)  # checks made by the time this judgment is done
        return judgment

    monkeypatch.setattr(judging.Guard, "check", counted_check)
    monkeypatch.setattr(judging, "judge_or_fail", judged)
    status, answer, endpoint = await one_request_of_8(tmp_path, bench_root)
    assert status == 200 and all(isinstance(r, float) for r in answer["rewards"])
    assert checks == len(RESPONSES)
    assert checked_while_judging[0] == writings_in_flight(None, endpoint) == 2  # not all 8 before the first
