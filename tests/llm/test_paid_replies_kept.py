"""Issue 23, defect 5: a paid reply is never paid for again.

A reply that fails validation used to be stored only when its re-ask chain ended, so a run killed during the
re-ask paid for the first ask again on resume (18 repeats in one kill at a 30 % invalid-reply rate). Now it is
kept the moment it is read, and the resumed call sends only the re-ask.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from llm_helpers import FAST_RETRY, SCORE_SCHEMA, req

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.llm.client import open_client

INVALID = {"score": 42, "reason": "out of range"}


def scored(hang_on_reask: bool) -> Any:
    def handler(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) == 1:
            return Reply.json(INVALID)
        return Reply.json({"score": 7, "reason": "ok"}, delay=30.0 if hang_on_reask else 0.0)
    return handler


async def test_a_run_killed_during_a_reask_does_not_pay_the_first_ask_again(fake_server: FakeServer,
                                                                             tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=60)
    fake_server.handler = scored(hang_on_reask=True)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        call = asyncio.ensure_future(client.chat(req(response_schema=SCORE_SCHEMA)))
        while len(fake_server.requests) < 2:
            await asyncio.sleep(0.01)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
    assert [len(b["messages"]) for b in fake_server.requests] == [1, 3]

    fake_server.handler = scored(hang_on_reask=False)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert result.ok and result.data == {"score": 7, "reason": "ok"}
    assert [len(b["messages"]) for b in fake_server.requests] == [1, 3, 3]  # only the re-ask went out again
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    asks, tokens = db.execute("SELECT asks, prompt_tokens FROM calls WHERE status = 'ok'").fetchone()
    assert asks == 2 and tokens == result.usage.prompt_tokens > 0  # the kept ask is accounted in this row


async def test_no_cache_mode_asks_again(fake_server: FakeServer, tmp_path: Path) -> None:
    """--no-cache never reads a kept reply either."""
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=60)
    fake_server.handler = scored(hang_on_reask=False)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        await client.chat(req(response_schema=SCORE_SCHEMA))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY, cache_mode="off") as client:
        await client.chat(req(response_schema=SCORE_SCHEMA))
    assert [len(b["messages"]) for b in fake_server.requests] == [1, 3, 1, 3]


async def test_a_call_whose_chain_ended_asks_again_on_redo(fake_server: FakeServer, tmp_path: Path) -> None:
    """--redo-failed: a call that failed after its re-asks is asked afresh; its kept replies are not replayed."""
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=60, reasks=1)
    fake_server.handler = lambda body: Reply.json(INVALID)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        failed = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert not failed.ok and len(fake_server.requests) == 2
    fake_server.handler = scored(hang_on_reask=False)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert result.ok and [len(b["messages"]) for b in fake_server.requests] == [1, 3, 1, 3]
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 0  # forgotten once each chain ended
