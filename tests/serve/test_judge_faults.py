"""A judge that blinks is waited for inside the request: killed for 2 s, restarted on its port, answering 503 for a
while; /health says "degraded" meanwhile; only a refusal that will not pass (401) is a 503. And the breaker's
probe lands even when its judgment's other calls fail (issue 34: a server that never recovered)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from fake_server import FakeServer, Reply, hold_port
from howtobench.concurrency import gather_or_cancel
from howtobench.config import EndpointConfig
from howtobench.errors import Unreachable
from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest
from judge_replies import server_handler
from reward_serving import judge_calls, openrlhf_body, running, settings_for

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(4)]
LABEL = {"instruction": "写一篇文章", "reference": "参考。", "task": "guide"}


async def wait_for_health(app: Any, status: str, timeout: float = 10.0) -> dict[str, Any]:
    import json

    until = time.monotonic() + timeout
    while True:
        code, text = await app.get("/health")
        answer = json.loads(text) if code == 200 else {}
        if answer.get("status") == status or time.monotonic() > until:
            return {"code": code, **answer}
        await asyncio.sleep(0.05)


async def test_a_judge_down_for_2_s_mid_step_is_waited_for_and_every_reward_is_judged(tmp_path: Path) -> None:
    holder = hold_port()
    port = holder.getsockname()[1]
    judge = FakeServer(server_handler(), port=port, reuse_port=True).start()
    settings = settings_for(judge, tmp_path / "ws", None, deadline_s=60.0)
    try:
        async with running(settings) as app:
            status, first, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:1], LABEL))
            assert status == 200 and first["substituted"] == [None]
            await asyncio.to_thread(judge.stop)  # the judge dies: connections refused
            step = asyncio.ensure_future(app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[1:], LABEL)))
            health = await wait_for_health(app, "degraded")
            assert health["code"] == 200 and "out of the pool" in health["reason"], health
            await asyncio.sleep(2.0)
            judge = FakeServer(server_handler(), port=port, reuse_port=True).start()  # back on its port
            back = time.monotonic()
            status, answer, _ = await step
            recovered_s = time.monotonic() - back
            print(f"judge back -> the step's rewards: {recovered_s:.2f} s")  # the figure docs/rl.md quotes
            assert status == 200, answer
            assert None not in answer["rewards"] and answer["substituted"] == [None] * 3, answer["failures"]
            assert recovered_s < 10.0
            # the restarted judge saw the step's calls once each: leaves of 3 writings (the weights were memoised)
            assert len(judge_calls(judge)) == 7 * 3
            assert (await wait_for_health(app, "ok"))["code"] == 200
            status, again, _ = await app.post("/get_reward", openrlhf_body(PROMPT, ["又一篇。" * 5], LABEL))
            assert status == 200 and again["substituted"] == [None]
            _, metrics = await app.get("/metrics")
            assert 'howtobench_requests_total{route="get_reward",status="503"}' not in metrics
    finally:
        judge.stop()
        holder.close()


async def test_a_judge_answering_503_for_a_while_is_retried_within_the_deadline(fake_server: FakeServer,
                                                                                tmp_path: Path) -> None:
    judge = server_handler()
    until = time.monotonic() + 1.5

    def blinking(request: dict[str, Any]) -> Reply:
        return Reply.server_error(503) if time.monotonic() < until else judge(request)

    fake_server.handler = blinking
    async with running(settings_for(fake_server, tmp_path / "ws", None, deadline_s=60.0)) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:2], LABEL))
    assert status == 200 and None not in answer["rewards"] and answer["substituted"] == [None, None]


async def test_a_refusal_that_will_not_pass_is_still_one_503_line(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda request: Reply.error(403, "forbidden")
    async with running(settings_for(fake_server, tmp_path / "ws", None, deadline_s=60.0)) as app:
        started = time.monotonic()
        status, text, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:2], LABEL))
    assert status == 503 and text.startswith("PermanentError: ") and time.monotonic() - started < 5


async def test_a_breaker_probe_lands_though_its_sibling_calls_fail_at_once(fake_server: FakeServer,
                                                                          tmp_path: Path) -> None:
    """`howtobench judge` keeps failing fast (Unreachable) while a probe is out; the probe itself, cancelled by
    that failure of its sibling, still reaches the judge and closes the circuit."""
    fake_server.handler = lambda request: Reply.text("ok")
    fake_server.latency = 0.3
    endpoint = EndpointConfig(model="m", base_urls=(fake_server.base_url,), concurrency=4)
    async with open_client(endpoint, workspace=tmp_path) as client:
        circuit = client.pool.circuits[0]
        circuit.open_until = client.pool.now() - 1  # out, cooldown over: probe
        circuit.opened_at = circuit.open_until - 10

        async def later() -> Any:
            await asyncio.sleep(0.05)  # the first call takes the probe; this one finds it out and fails
            return await client.chat(ChatRequest(messages=[{"role": "user", "content": "b"}]))

        try:
            await gather_or_cancel(client.chat(ChatRequest(messages=[{"role": "user", "content": "a"}])), later())
            raise AssertionError("the sibling should have failed")
        except Unreachable:
            pass
        for _ in range(100):
            if circuit.open_until == 0.0:
                break
            await asyncio.sleep(0.02)
    assert circuit.open_until == 0.0 and len(fake_server.requests) == 1
