"""`serve --guard`: skip answers a 30-fold repeated paragraph with no judge call and its reason; flag returns the
signals with every reward and their means in /metrics."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "guard"))
from crafted import guide_item_and_writing, repeated_paragraph  # noqa: E402

from fake_server import FakeServer  # noqa: E402
from howtobench.guard.guard import FLOOR, GuardSettings  # noqa: E402
from judge_replies import server_handler  # noqa: E402
from reward_serving import (  # noqa: E402
    GUIDE,
    ServeProcess,
    judge_calls,
    openrlhf_body,
    running,
    serve_args,
    settings_for,
)

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"


async def test_skip_answers_a_repeated_paragraph_without_any_judge_call(fake_server: FakeServer, tmp_path: Path,
                                                                        bench_root: Path) -> None:
    fake_server.handler = server_handler()
    _, writing = guide_item_and_writing(bench_root)
    looped = repeated_paragraph(writing, 30)
    settings = settings_for(fake_server, tmp_path / "ws", bench_root, guard=GuardSettings(mode="skip"))
    async with running(settings) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, [looped], GUIDE))
        assert status == 200 and judge_calls(fake_server) == []  # the fake judge's counter unchanged
        assert answer["rewards"] == [FLOOR] and "loop_paragraphs" in answer["failures"][0]
        assert answer["extra_logs"]["howtobench/guard/skipped"] == [1.0]
        status, scored, _ = await app.post("/v1/score", {"samples": [{"label": GUIDE, "response": looped}]})
        result = scored["results"][0]
        assert result["guard"]["skipped"] and "loop_paragraphs" in result["guard"]["skipped_by"]
        assert judge_calls(fake_server) == []
        _, metrics = await app.get("/metrics")
    assert 'howtobench_samples_total{outcome="skipped"} 2.0' in metrics
    assert 'howtobench_guard_skipped_total{rule="loop_paragraphs"} 2.0' in metrics
    assert "judgment_failed" not in metrics


async def test_skip_with_null_reward_takes_the_group_mean_like_a_failure(fake_server: FakeServer, tmp_path: Path,
                                                                         bench_root: Path) -> None:
    fake_server.handler = server_handler()
    _, writing = guide_item_and_writing(bench_root)
    settings = settings_for(fake_server, tmp_path / "ws", bench_root, failed_reward="group-mean",
                            guard=GuardSettings(mode="skip", reward=None))
    async with running(settings) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(
            PROMPT, [writing, repeated_paragraph(writing)], GUIDE))
    assert status == 200 and answer["rewards"][0] is not None
    assert answer["rewards"][1] == pytest.approx(answer["rewards"][0])  # zero advantage in its group
    assert answer["substituted"][1].startswith("group-mean") and "loop_paragraphs" in answer["failures"][1]


async def test_flag_returns_signals_with_every_reward_and_means_in_metrics(fake_server: FakeServer, tmp_path: Path,
                                                                          bench_root: Path) -> None:
    fake_server.handler = server_handler()
    _, writing = guide_item_and_writing(bench_root)
    looped = repeated_paragraph(writing, 30)
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:  # flag: the default
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, [writing, looped], GUIDE))
        _, metrics = await app.get("/metrics")
    assert status == 200 and None not in answer["rewards"]  # both judged: flag never skips
    logs = answer["extra_logs"]
    assert logs["howtobench/guard/skipped"] == [0.0, 0.0] and logs["howtobench/guard/flags"][0] == 0.0
    share = logs["howtobench/guard/repeated_paragraph_share"]
    assert share[0] == 0.0 and share[1] > 0.9 and not math.isnan(logs["howtobench/guard/compression_ratio"][0])
    mean = float(metrics.split('howtobench_guard_signal_mean{signal="repeated_paragraph_share"} ')[1].split()[0])
    assert mean == pytest.approx(share[1] / 2)
    assert 'howtobench_guard_flag_rate{rule="loop_paragraphs"} 0.5' in metrics
    json.dumps(answer)  # the answer stays JSON


def test_the_serve_command_with_guard_skip(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    """`howtobench serve --guard skip --guard-reward null --failed-reward none` in its own process: no judge call,
    null with the reason."""
    import urllib.request

    fake_server.handler = server_handler()
    _, writing = guide_item_and_writing(bench_root)
    args = serve_args(fake_server.base_url, tmp_path / "ws", "--data", str(bench_root), "--guard", "skip",
                      "--guard-reward", "null", "--failed-reward", "none")
    with ServeProcess(args) as served:
        body = json.dumps(openrlhf_body(PROMPT, [repeated_paragraph(writing, 30)], GUIDE)).encode()
        request = urllib.request.Request(served.url + "/get_reward", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=60) as resp:
            answer = json.loads(resp.read())
        with urllib.request.urlopen(served.url + "/metrics", timeout=60) as resp:
            metrics = resp.read().decode()
    assert answer["rewards"] == [None] and "loop_paragraphs" in answer["failures"][0]
    assert judge_calls(fake_server) == []
    assert 'howtobench_guard_skipped_total{rule="loop_paragraphs"} 1.0' in metrics
