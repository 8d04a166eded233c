"""`--group-size n`: a failed rollout that arrives before the rest of its group (OpenRLHF sends each rollout as it
finishes) gets the mean of the whole group, not the all-failed constant of a group of one; a rollout that never
comes holds the others for the straggler wait only."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from fake_server import FakeServer, Reply
from judge_replies import server_handler
from reward_serving import openrlhf_body, running, settings_for

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
LABEL = {"instruction": "写一篇文章", "reference": "参考。", "task": "guide"}
GOOD = ["# 标题\n\n第一段，文文文文。\n\n结尾。", "# 标题\n\n第二段，文文文文文文文文文文。\n\n结尾。"]


def truncated() -> dict:
    """A rollout whose query no longer starts with its prompt (OpenRLHF left-truncated it): no reward of its own."""
    body = openrlhf_body(PROMPT, ["正文"], LABEL)
    body["query"] = [body["query"][0][5:]]
    return body


@pytest.mark.parametrize("group_size", [None, 3])
async def test_a_failed_rollout_sent_first_gets_its_whole_groups_mean_with_group_size(
        fake_server: FakeServer, tmp_path: Path, group_size: int | None) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", None, group_size=group_size)) as app:
        first = asyncio.ensure_future(app.post("/get_reward", truncated()))
        await asyncio.sleep(0.3)
        rest = await asyncio.gather(*(app.post("/get_reward", openrlhf_body(PROMPT, [g], LABEL)) for g in GOOD))
        status, failed, _ = await first
    judged = [answer["rewards"][0] for _, answer, _ in rest]
    assert status == 200 and all(s == 200 for s, _, _ in rest) and None not in judged
    if group_size is None:  # alone in flight: a group of one with no judged sample
        assert failed["rewards"] == [0.0] and failed["substituted"][0].startswith("group-mean: no sample")
    else:
        assert failed["rewards"] == [pytest.approx(sum(judged) / 2)]
        assert failed["substituted"][0].startswith("group-mean: the mean of the 2 judged sample(s)")
        assert failed["extra_logs"]["howtobench/substituted"] == [1.0]


async def test_a_missing_rollout_holds_its_group_for_the_straggler_wait_only(fake_server: FakeServer,
                                                                             tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", None, group_size=3)) as app:
        app.state.service.cohorts.straggler_s = 0.5
        started = time.monotonic()
        (_, failed, _), (_, judged, _) = await asyncio.gather(
            app.post("/get_reward", truncated()), app.post("/get_reward", openrlhf_body(PROMPT, GOOD[:1], LABEL)))
        waited = time.monotonic() - started
        # the next step's rollouts of this instruction start a new group
        (_, again, _), = await asyncio.gather(app.post("/get_reward", truncated()))
    assert failed["rewards"] == [pytest.approx(judged["rewards"][0])] and waited < 5
    assert again["rewards"] == [0.0]  # alone after the wait: its own group, none judged


async def test_failed_rollouts_of_two_groups_sent_one_request_each_are_answered_at_once(fake_server: FakeServer,
                                                                                       tmp_path: Path) -> None:
    """A failed sample waits for its group to close; a change of its group between that wait's start and its first
    turn was missed, and half the rollouts waited the whole deadline (found by tests/trainers with OpenRLHF)."""
    fake_server.handler = lambda r: Reply.text("garbage") if r.get("response_format") else Reply.text("x")
    async with running(settings_for(fake_server, tmp_path / "ws", None, deadline_s=60.0)) as app:
        started = time.monotonic()
        answers = await asyncio.gather(*(app.post("/get_reward", openrlhf_body(
            f"写一篇文章{k % 2}", [f"正文{k}"], f'{{"instruction": "写一篇文章{k % 2}"}}')) for k in range(16)))
        took = time.monotonic() - started
    assert [a["rewards"] for _, a, _ in answers] == [[0.0]] * 16 and took < 30
