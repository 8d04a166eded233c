"""`/metrics` shows the judge calls `serve` lets in flight: the level auto concurrency found, or the fixed one."""

from __future__ import annotations

from pathlib import Path

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.llm.adaptive import START
from howtobench.serve.setup import ServeSettings
from judge_replies import server_handler
from reward_serving import GUIDE, openrlhf_body, running, settings_for

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(8)]


def gauge(metrics: str) -> float:
    return float(metrics.split("\nhowtobench_judge_concurrency ")[1].split()[0])


async def test_auto_level_is_shown_and_grows_under_load(fake_server: FakeServer, tmp_path: Path,
                                                        bench_root: Path) -> None:
    fake_server.handler = server_handler()
    fake_server.latency = 0.02
    auto = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))  # no concurrency given: auto
    async with running(ServeSettings(endpoint=auto, workspace=tmp_path / "ws", data_dir=bench_root)) as app:
        _, before = await app.get("/metrics")
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES, GUIDE))
        assert status == 200 and None not in answer["rewards"]
        _, after = await app.get("/metrics")
    assert gauge(before) == START
    assert gauge(after) > START  # 57 judge calls at once: slow start took the level up


async def test_a_fixed_level_is_shown_as_given(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:  # --judge-concurrency 16
        _, metrics = await app.get("/metrics")
    assert gauge(metrics) == 16
