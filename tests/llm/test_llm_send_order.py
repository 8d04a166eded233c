"""A response that frees a slot for a queued request lets that request go out before it is processed further
(read and charged to --max-cost first, so the queued request's budget check sees its cost).

Why it matters: responses arrive in bursts, and processing each one (parse, validate, log, judge) before any
queued request is sent made the last request of a burst wait for the whole burst (bench/saturation.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from llm_helpers import SCORE_SCHEMA, req

from howtobench.config import EndpointConfig
from howtobench.errors import BudgetExceeded
from howtobench.llm import structured
from howtobench.llm.budget import spending_limit
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


async def test_the_queued_request_is_sent_before_the_response_that_freed_its_slot_is_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    parse_reply = structured.parse_reply

    def noting_parse_reply(text: str, *args: object) -> object:
        events.append(f"checked {json.loads(text)['reason']}")
        return parse_reply(text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(structured, "parse_reply", noting_parse_reply)
    endpoint = EndpointConfig(model="m", base_urls=("http://127.0.0.1:9/v1",), concurrency=1)
    async with open_client(endpoint, workspace=tmp_path, transport=RecordingTransport(events)) as client:
        results = await asyncio.gather(*(client.chat(req(json.dumps({"score": 1, "reason": name}),
                                                         response_schema=SCORE_SCHEMA)) for name in "ab"))
    assert [r.data for r in results] == [{"score": 1, "reason": "a"}, {"score": 1, "reason": "b"}]
    assert [e[:6] for e in events] == ["sent {", "sent {", "checke", "checke"]
    assert events[2:] == ["checked a", "checked b"]


async def test_release_says_whether_a_waiting_request_got_the_slot() -> None:
    pool = SlotPool(("u",), per_url=1)
    first = await pool.acquire()
    waiting = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    assert pool.release(first, "reached") is True
    assert await waiting == 0
    assert pool.release(0, "reached") is False


async def test_max_cost_sees_a_response_charged_before_the_request_that_took_its_slot_goes_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One slot, three queued calls, a cap that one call's cost reaches: exactly one call is sent."""
    events: list[str] = []
    prices = tmp_path / "prices.yaml"
    prices.write_text("m: {input: 1000000, output: 0}\n", encoding="utf-8")  # $1 a prompt token
    endpoint = EndpointConfig(model="m", base_urls=("http://127.0.0.1:9/v1",), concurrency=1)
    transport = RecordingTransport(events)
    real_post = transport.post_json

    async def post_with_usage(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        resp = await real_post(url, body, headers, timeout_s)
        reply = json.loads(resp.body) | {"usage": {"prompt_tokens": 1, "completion_tokens": 0}}
        return HttpResponse(200, {}, json.dumps(reply).encode())

    monkeypatch.setattr(transport, "post_json", post_with_usage)
    with spending_limit(1.0):
        async with open_client(endpoint, workspace=tmp_path, transport=transport, prices=prices) as client:
            outcomes = await asyncio.gather(*(client.chat(req(t)) for t in "abc"), return_exceptions=True)
    assert events == ["sent a"]
    assert outcomes[0].ok and all(isinstance(o, BudgetExceeded) for o in outcomes[1:])  # type: ignore[union-attr]
