"""slime (THUDM/slime): its `remote_rm` request against `POST /slime`, and `howtobench.rl.slime.group_reward` awaited
as its `--custom-rm-path ... --group-rm` awaits it. slime is not on the package registry under its name, so the
request is slime's as its released code sends it (`slime/rollout/rm_hub/__init__.py`, `remote_rm`: `payload =
{"prompt": sample.prompt, "response": sample.response, "label": sample.label}`, `session.post(args.rm_url,
json=payload)`, `resp.raise_for_status()`, `return await resp.json()`), and the reward is read as slime reads it
(`slime/utils/types.py`, `Sample.get_reward_value`: `self.reward if not args.reward_key else
self.reward[args.reward_key]`)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from fake_server import FakeServer, Reply
from howtobench.rl.slime import group_reward
from judge_replies import server_handler
from reward_serving import GUIDE, judge_calls, running, settings_for

RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(3)]


async def remote_rm(rm_url: str, sample: Any) -> Any:
    """slime's `remote_rm`, one attempt (its retries only repeat this)."""
    payload = {"prompt": sample.prompt, "response": sample.response, "label": sample.label}
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.post(rm_url, json=payload) as resp:
        resp.raise_for_status()
        return await resp.json()


def get_reward_value(reward: Any, args: Any) -> float:
    """slime's `Sample.get_reward_value`."""
    return reward if not args.reward_key else reward[args.reward_key]  # type: ignore[no-any-return]


async def test_slime_remote_rm_request_gets_the_v1_score_reward_under_its_reward_key(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = server_handler()
    args = SimpleNamespace(reward_key="reward")
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        samples = [SimpleNamespace(prompt=[{"role": "user", "content": "写一篇文章"}], response=r, label=GUIDE)
                   for r in RESPONSES]
        rewards = await asyncio.gather(*(remote_rm(app.url + "/slime", s) for s in samples))
        _, scored, _ = await app.post("/v1/score", {"samples": [{"response": r, "label": GUIDE} for r in RESPONSES]})
        calls = len(judge_calls(fake_server))
        poem = SimpleNamespace(prompt="写一首诗", response="床前明月光", label=None)
        free = await remote_rm(app.url + "/slime", poem)
    assert [get_reward_value(r, args) for r in rewards] == pytest.approx([r["reward"] for r in scored["results"]])
    assert calls == 1 + 7 * 3  # one group's weights, shared by its 3 rollouts sent one request each
    assert rewards[0]["howtobench/substituted"] == 0.0 and rewards[0]["howtobench/present/root"] == 1.0
    assert not any(isinstance(v, float) and math.isnan(v) for r in rewards for v in r.values())
    assert free["reward"] is not None and free["failure"] is None


async def test_slime_group_rm_gets_floats_or_dicts_and_a_failed_group_the_flagged_constant(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        group = [SimpleNamespace(prompt="写一篇文章", response=r, label=GUIDE) for r in RESPONSES]
        floats = await group_reward(SimpleNamespace(rm_url=app.url + "/slime", reward_key=None), group)
        assert len(judge_calls(fake_server)) == 1 + 7 * 3
        dicts = await group_reward(SimpleNamespace(rm_url=app.url + "/slime", reward_key="reward"), group)
        fake_server.handler = lambda r: Reply.text("garbage") if r.get("response_format") else Reply.text("x")
        other = [SimpleNamespace(prompt="写一首诗", response=f"诗{k}", label={"instruction": "写一首诗"})
                 for k in range(2)]
        failed = await group_reward(SimpleNamespace(rm_url=app.url, reward_key="reward"), other)
    assert all(isinstance(f, float) for f in floats) and [d["reward"] for d in dicts] == pytest.approx(floats)
    assert [f["reward"] for f in failed] == [0.0, 0.0] and [f["howtobench/substituted"] for f in failed] == [1.0] * 2
