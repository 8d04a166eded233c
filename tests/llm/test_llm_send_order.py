"""A response that frees a slot for a queued request lets that request go out before it is processed itself.

Why it matters: responses arrive in bursts, and processing each one (parse, validate, log, judge) before any
queued request is sent made the last request of a burst wait for the whole burst (bench/saturation.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from llm_helpers import req

from howtobench.config import EndpointConfig
from howtobench.llm import client as client_module
from howtobench.llm.client import open_client
from howtobench.llm.limits import SlotPool
from howtobench.llm.transport import HttpResponse


class RecordingTransport:
    """Answers every POST at once with the request's own text as the reply, noting when each was sent."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        text = json.loads(body)["messages"][-1]["content"]
        self.events.append(f"sent {text}")
        await asyncio.sleep(0.01)
        reply = {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": {}}
        return HttpResponse(200, {}, json.dumps(reply).encode())

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        raise AssertionError("not used")

    async def close(self) -> None:
        return None


async def test_the_queued_request_is_sent_before_the_response_that_freed_its_slot_is_parsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    parse = client_module._parse_completion

    def noting_parse(raw: bytes, *args: object) -> object:
        answer = parse(raw, *args)  # type: ignore[arg-type]
        events.append(f"parsed {answer.content}")
        return answer

    monkeypatch.setattr(client_module, "_parse_completion", noting_parse)
    endpoint = EndpointConfig(model="m", base_urls=("http://127.0.0.1:9/v1",), concurrency=1)
    async with open_client(endpoint, workspace=tmp_path, transport=RecordingTransport(events)) as client:
        results = await asyncio.gather(client.chat(req("a")), client.chat(req("b")))
    assert [r.text for r in results] == ["a", "b"]
    assert events == ["sent a", "sent b", "parsed a", "parsed b"]


async def test_release_says_whether_a_waiting_request_got_the_slot() -> None:
    pool = SlotPool(("u",), per_url=1)
    first = await pool.acquire()
    waiting = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    assert pool.release(first, "reached") is True
    assert await waiting == 0
    assert pool.release(0, "reached") is False
