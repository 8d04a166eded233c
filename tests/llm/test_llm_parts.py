"""The client's small parts: slots, rpm spacing, retry classification, reply parsing, prices and estimates."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from llm_helpers import SCORE_SCHEMA, req

from howtobench.errors import ConfigError
from howtobench.llm import structured
from howtobench.llm.accounting import Price, estimate, estimate_tokens, load_prices, price_for
from howtobench.llm.limits import RpmLimiter, SlotPool
from howtobench.llm.retry import RetryPolicy, classify_status, parse_retry_after
from howtobench.llm.types import SamplingParams


async def test_slot_pool_caps_each_url_and_spreads_least_busy() -> None:
    pool = SlotPool(("a", "b"), per_url=2)
    peak = {"a": 0, "b": 0}
    live = {"a": 0, "b": 0}
    used: list[str] = []

    async def call() -> None:
        async with pool.slot() as url:
            used.append(url)
            live[url] += 1
            peak[url] = max(peak[url], live[url])
            await asyncio.sleep(0.01)
            live[url] -= 1

    await asyncio.gather(*(call() for _ in range(20)))
    assert peak == {"a": 2, "b": 2} and used.count("a") == used.count("b") == 10
    assert pool.in_flight() == {"a": 0, "b": 0}


async def test_slot_pool_survives_cancelled_waiters() -> None:
    pool = SlotPool(("a",), per_url=1)
    first = await pool.acquire()
    waiter = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    pool.release(first)
    assert await asyncio.wait_for(pool.acquire(), 1) == 0
    pool.release(0)
    assert pool.in_flight() == {"a": 0}


async def test_rpm_limiter_spaces_starts() -> None:
    rpm = 1200
    limiter = RpmLimiter(rpm=rpm)
    start = time.monotonic()
    for _ in range(4):
        await limiter.wait()
    assert time.monotonic() - start >= 0.95 * 3 * 60 / rpm  # three gaps of 60 / rpm s (a loaded machine only adds)


def test_status_classes_and_retry_after() -> None:
    assert [classify_status(s) for s in (200, 429, 500, 503, 408, 401, 403, 404, 400, 422, 413, 302)] == [
        "ok", "rate_limited", "transient", "transient", "transient", "refused", "refused", "refused", "refused",
        "refused", "too_long", "refused"]
    assert classify_status(400, "prompt is too long: 200010 tokens > 200000 maximum") == "too_long"
    assert classify_status(400, "Content Exists Risk") == "filtered"
    assert parse_retry_after("2") == 2.0 and parse_retry_after("0.25") == 0.25 and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0


def test_backoff_is_jittered_exponential_and_honours_retry_after() -> None:
    policy, rng = RetryPolicy(base_s=1, max_s=8), random.Random(0)
    delays = [policy.delay(n, None, rng) for n in range(1, 7) for _ in range(50)]
    assert max(delays) <= 8 and min(delays) >= 0 and len(set(delays)) > 100
    assert all(policy.delay(1, 5.0, rng) >= 5.0 for _ in range(20))


@pytest.mark.parametrize(
    ("text", "answer", "reasoning"),
    [
        ("<think>a</think>\nB", "B", "a"),
        ("plan</think>B", "B", "plan"),  # template already opened the tag
        ("B<think>cut off", "B", "cut off"),
        ("no thinking", "no thinking", None),
    ],
)
def test_split_reasoning(text: str, answer: str, reasoning: str | None) -> None:
    assert structured.split_reasoning(text) == (answer, reasoning)


def test_parse_reply_finds_json_and_validates() -> None:
    key = "score"
    assert structured.parse_reply('```json\n{"score": 3, "reason": "r"}\n```', SCORE_SCHEMA, key) == (
        {"score": 3, "reason": "r"}, None)
    assert structured.parse_reply('Sure! {"score": 3, "reason": "r"} Done.', SCORE_SCHEMA, key)[1] is None
    data, why = structured.parse_reply('{"score": 0, "reason": "r"}', SCORE_SCHEMA, key)
    assert data is None and why is not None and "score" in why
    assert structured.parse_reply("[1, 2]", SCORE_SCHEMA, key) == (None, "the reply is JSON but not an object")
    assert structured.parse_reply('{"score": 3', SCORE_SCHEMA, key)[1] == "the reply holds no parseable JSON object"


def test_price_lookup_cost_and_user_table(tmp_path: Path) -> None:
    table = load_prices()
    assert price_for("gpt-4o-mini-2024-07-18", table) == table["gpt-4o-mini"]  # longest prefix wins
    assert price_for("unknown-model", table) is None
    price = Price(input=2.0, cached_input=0.5, output=8.0)
    assert price.cost(1_000_000, 500_000, cached_tokens=400_000) == pytest.approx(1.2 + 0.2 + 4.0)
    extra = tmp_path / "prices.yaml"
    extra.write_text("my-judge: {input: 1, output: 2}\ngpt-4o: {input: 9, output: 9}\n")
    mine = load_prices(extra)
    assert mine["my-judge"].cost(10**6, 10**6) == 3.0 and mine["gpt-4o"].input == 9
    extra.write_text("broken: {input: cheap}\n")
    with pytest.raises(ConfigError):
        load_prices(extra)


def test_estimate_counts_calls_tokens_and_cost() -> None:
    assert estimate_tokens("一二三四五六") == 4 and estimate_tokens("abcdefgh") == 2
    requests = [req("一二三四五六", sampling=SamplingParams(max_tokens=100)), req("abcdefgh")]
    usage = estimate(requests, Price(input=1.0, output=2.0), completion_tokens=50)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 4 + 4 + 2 + 4, 150)
    assert usage.cost_usd == pytest.approx((14 * 1.0 + 150 * 2.0) / 1e6)


def test_extract_json_accepts_raw_newlines_inside_strings() -> None:
    # The local llama.cpp server in json_object mode writes newlines inside string values.
    reply = '{ "reason": "Reasoning:\n  fine" ,"genre": "poem"}'
    assert structured.extract_json(reply) == {"reason": "Reasoning:\n  fine", "genre": "poem"}
