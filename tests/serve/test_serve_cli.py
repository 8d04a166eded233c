"""`howtobench serve` as a process: its URL on stdout, health, SIGTERM, a refusing judge, and kill -9 mid-load then a
restart on the same workspace that answers what it had answered from the cache."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from fake_server import FakeServer, Reply
from howtobench.data.loader import load_items
from howtobench.serve.server import exposure_warning
from judge_replies import server_handler
from reward_serving import GUIDE, ServeProcess, judge_calls, openrlhf_body, serve_args

PROMPT = "<|im_start|>user\n写<|im_end|>\n<|im_start|>assistant\n"
GROUPS = [[f"# 第{g}组\n\n{'字' * (20 + g)}，第{k}篇。" for k in range(4)] for g in range(6)]
GUIDE_ITEMS = ["guide/infer_354", "guide/infer_355", "guide/infer_356", "guide/infer_357", "guide/infer_358",
               "guide/infer_359"]


async def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.post(url + "/get_reward", json=body) as resp:
        assert resp.status == 200, await resp.text()
        return dict(await resp.json())


def test_serve_prints_its_url_alone_answers_and_stops_on_sigterm(fake_server: FakeServer, tmp_path: Path,
                                                                 bench_root: Path) -> None:
    fake_server.handler = server_handler()
    with ServeProcess(serve_args(fake_server.base_url, tmp_path / "ws", "--data", str(bench_root))) as served:
        answer = asyncio.run(post(served.url, openrlhf_body(PROMPT, GROUPS[0], GUIDE)))
        assert len(answer["rewards"]) == 4 and None not in answer["rewards"]
        assert served.proc is not None
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(30) == 0
        assert served.proc.stderr is not None
        err = served.proc.stderr.read()
    assert served.url.startswith("http://127.0.0.1:")
    assert f"--reward.remote_url {served.url}/get_reward" in err and "preflight: the judge answered" in err


def test_a_judge_refusing_the_preflight_stops_the_server_with_one_line(fake_server: FakeServer,
                                                                       tmp_path: Path) -> None:
    fake_server.handler = lambda request: Reply.error(401, "bad key")
    cmd = [sys.executable, "-m", "howtobench", "serve", "--port", "0",
           *serve_args(fake_server.base_url, tmp_path / "ws")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "401" in errors[0] and "Traceback" not in done.stderr


def test_exposure_warning_only_off_loopback() -> None:
    assert exposure_warning("127.0.0.1") is None and exposure_warning("localhost") is None
    warning = exposure_warning("0.0.0.0")
    assert warning is not None and "no authentication" in warning


def test_kill_9_mid_load_then_restart_answers_what_it_answered_from_the_cache(tmp_path: Path,
                                                                              bench_root: Path) -> None:
    judge = FakeServer(server_handler(), latency=0.05, capacity=4)
    workspace = tmp_path / "ws"
    bodies = [openrlhf_body(PROMPT, group, item) for group, item in zip(GROUPS, GUIDE_ITEMS, strict=True)]
    first_instruction = next(i.instruction for i in load_items(bench_root, ["guide"]) if i.id == "infer_354")
    with judge:
        args = serve_args(judge.base_url, workspace, "--data", str(bench_root))
        with ServeProcess(args) as first:
            answered = asyncio.run(post(first.url, bodies[0]))  # answered before the kill
            asyncio.run(_load_then_kill(first, bodies[1:]))
        assert len(judge_calls(judge)) < (1 + 7 * 4) * 6  # killed mid-load: not everything was judged
        judge.reset()
        with ServeProcess(args) as second:
            again = asyncio.run(post(second.url, bodies[0]))
            # the samples answered before cost no judge call (the fake judge may still be serving calls the
            # killed server had queued: those are about other groups)
            assert [r for r in judge_calls(judge) if about(r, GROUPS[0]) or about(r, [first_instruction])] == []
            assert again["rewards"] == answered["rewards"]
            rest = asyncio.run(_all(second.url, bodies[1:]))
    assert all(None not in r["rewards"] for r in rest)
    assert json.dumps(again["extra_logs"]) == json.dumps(answered["extra_logs"])


def about(request: dict[str, Any], texts: list[str]) -> bool:
    prompt = json.dumps(request["messages"], ensure_ascii=False)
    return any(text in prompt for text in texts)


async def _load_then_kill(served: ServeProcess, bodies: list[dict[str, Any]]) -> None:
    """Send every body at once and kill -9 the server while they are being judged."""
    async with aiohttp.ClientSession() as http:
        sent = [asyncio.ensure_future(http.post(served.url + "/get_reward", json=b)) for b in bodies]
        await asyncio.sleep(0.5)
        served.kill9()
        results = await asyncio.gather(*sent, return_exceptions=True)
    assert any(isinstance(r, Exception) for r in results)  # the kill came mid-load: not every one was answered


async def _all(url: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(post(url, b) for b in bodies)))
