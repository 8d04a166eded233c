"""The client against the fake server: retries, re-asks, failures, cache modes, keys and secrets."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from llm_helpers import FAST_RETRY, SCORE_SCHEMA, req

from fake_server import FakeServer, Reply, script
from howtobench.config import EndpointConfig
from howtobench.errors import CacheMiss, PermanentError, TransientError
from howtobench.llm.client import cache_key, open_client
from howtobench.llm.types import ChatRequest, SamplingParams


async def test_text_reply_think_stripped_and_logged(fake_server: FakeServer, endpoint: EndpointConfig,
                                                    tmp_path: Path) -> None:
    fake_server.handler = script(Reply.text("<think>先想想</think>答案", cached_tokens=5))
    async with open_client(endpoint, workspace=tmp_path, run_id="r1") as client:
        result = await client.chat(req(purpose="generation"))
    assert result.ok and result.text == "答案" and result.reasoning == "先想想"
    assert result.usage.cached_tokens == 5 and result.usage.prompt_tokens > 0
    row = sqlite3.connect(tmp_path / "calls.sqlite").execute(
        "SELECT run_id, purpose, status, attempts, cached_tokens, endpoint FROM calls").fetchall()
    assert row == [("r1", "generation", "ok", 1, 5, fake_server.base_url)]


async def test_retries_every_transient_fault_then_succeeds(fake_server: FakeServer, endpoint: EndpointConfig,
                                                           tmp_path: Path) -> None:
    fake_server.handler = script(Reply.rate_limited(0.01), Reply.server_error(), Reply.drop(), Reply.timeout(),
                                 Reply.truncated_body(), Reply.json({"score": 4, "reason": "ok"}))
    # 1.5 s, not 0.5: on a loaded machine the in-process server may read a request later than 0.5 s, and a request
    # it never read is an attempt without a scripted reply
    patient = endpoint.model_copy(update={"timeout_s": 1.5})
    async with open_client(patient, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert result.ok and result.data == {"score": 4, "reason": "ok"}
    assert result.attempts == 6 == len(fake_server.requests)


async def test_retry_budget_exhausted_raises_transient_error(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda _req: Reply.server_error(503)
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), max_retries=2)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(TransientError) as info:
            await client.chat(req())
    assert str(info.value) == (f"model m: {fake_server.base_url} answered HTTP 503: internal server error "
                               "(gave up after 3 attempts)")
    assert len(fake_server.requests) == 3


async def test_retry_after_is_honoured(fake_server: FakeServer, endpoint: EndpointConfig, tmp_path: Path) -> None:
    fake_server.handler = script(Reply.rate_limited(0.3))
    async with open_client(endpoint, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req())
    assert result.ok and result.latency_s >= 0.3


async def test_invalid_reply_reasked_then_fails_with_raw_text(fake_server: FakeServer, endpoint: EndpointConfig,
                                                              tmp_path: Path) -> None:
    fake_server.handler = lambda _req: Reply.json({"score": 11, "reason": "too high"})
    async with open_client(endpoint, workspace=tmp_path) as client:
        result = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert not result.ok and result.data is None
    assert result.raw_text == '{"score": 11, "reason": "too high"}'
    assert "BadResponse" in (result.error or "") and "score" in (result.error or "")
    assert len(fake_server.requests) == 1 + endpoint.reasks
    last = fake_server.requests[-1]["messages"]
    assert last[1] == {"role": "assistant", "content": '{"score": 11, "reason": "too high"}'}
    assert "invalid" in last[2]["content"]


async def test_reask_recovers(fake_server: FakeServer, endpoint: EndpointConfig, tmp_path: Path) -> None:
    good = {"score": 7, "reason": "x"}
    fake_server.handler = script(Reply.truncated_json(good), Reply.json(good))
    async with open_client(endpoint, workspace=tmp_path) as client:
        result = await client.chat(req(response_schema=SCORE_SCHEMA))
    assert result.ok and result.data == {"score": 7, "reason": "x"} and result.attempts == 2
    row = sqlite3.connect(tmp_path / "calls.sqlite").execute("SELECT asks, attempts FROM calls").fetchone()
    assert row == (2, 2)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 422])
async def test_permanent_errors_fail_fast(fake_server: FakeServer, tmp_path: Path, status: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY_VAR", "sk-secret-abc123")
    fake_server.handler = lambda _req: Reply.error(status, "bad key sk-secret-abc123")
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), api_key_env="FAKE_KEY_VAR")
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(PermanentError) as info:
            await client.chat(req())
    assert str(info.value) == (
        f"{fake_server.base_url}/chat/completions answered HTTP {status} for model m: bad key ***. "
        "Check the base URL, the model name and the API key variable FAKE_KEY_VAR.")
    assert len(fake_server.requests) == 1


async def test_context_too_long_fails_this_call_only(fake_server: FakeServer, endpoint: EndpointConfig,
                                                     tmp_path: Path) -> None:
    fake_server.handler = script(Reply.error(400, "This model's maximum context length is 8192 tokens."))
    async with open_client(endpoint, workspace=tmp_path, retry=FAST_RETRY) as client:
        first = await client.chat(req("long"))
        second = await client.chat(req("short"))
    assert not first.ok and first.attempts == 1
    assert first.error == (f"ContextTooLong: the prompt does not fit the context of model fake-model: "
                           f"{fake_server.base_url} answered HTTP 400: This model's maximum context length is "
                           "8192 tokens.")
    assert second.ok and len(fake_server.requests) == 2


async def test_api_key_sent_but_never_stored(fake_server: FakeServer, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-DO-NOT-LEAK-9876"
    monkeypatch.setenv("HTB_TEST_KEY", secret)
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), api_key_env="HTB_TEST_KEY")
    fake_server.handler = script(Reply.server_error(), Reply.error(400, f"context_length_exceeded {secret}"))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        ok = await client.chat(req("a"))
        bad = await client.chat(req("b"))
        await client.chat(req("c"))
    assert fake_server.log[-1].headers["authorization"] == f"Bearer {secret}"
    assert secret not in (bad.error or "") and secret not in ok.model_dump_json()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


async def test_cache_hit_no_second_request(fake_server: FakeServer, endpoint: EndpointConfig, tmp_path: Path) -> None:
    async with open_client(endpoint, workspace=tmp_path) as client:
        first = await client.chat(req())
    async with open_client(endpoint, workspace=tmp_path) as client:
        again = await client.chat(req())
        assert client.usage_by_purpose()["other"].cached_calls == 1
    assert again.from_cache and again.text == first.text and len(fake_server.requests) == 1


async def test_cache_key_ignores_timeouts_retries_concurrency_and_url(fake_server: FakeServer, tmp_path: Path) -> None:
    first = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=5, max_retries=1, concurrency=1)
    other = EndpointConfig(model="m", base_urls=(fake_server.base_url + "/",), timeout_s=99, max_retries=9,
                           concurrency=50, rpm=600)
    async with open_client(first, workspace=tmp_path) as client:
        await client.chat(req())
    async with open_client(other, workspace=tmp_path) as client:
        assert (await client.chat(req())).from_cache
    assert len(fake_server.requests) == 1


def test_cache_key_covers_what_shapes_the_reply() -> None:
    base = req()
    keys = {
        cache_key("m", base),
        cache_key("other-model", base),
        cache_key("m", req("不同")),
        cache_key("m", req(sampling=SamplingParams(temperature=0.7))),
        cache_key("m", req(response_schema=SCORE_SCHEMA)),
        cache_key("m", req(template_version="v2")),
        cache_key("m", req(sample_index=1)),
    }
    assert len(keys) == 7
    assert cache_key("m", base) == cache_key("m", req(purpose="another-purpose"))


def test_cache_keys_are_stable_across_versions() -> None:
    """Pinned sha256 keys: a change to how the key is computed would silently orphan every cached call."""
    plain = req("请写一首诗\n\"引号\"\t\\ \u0001 é 🙂")
    schema = {"type": "object", "properties": {"analysis": {"type": "string"}, "score": {"enum": [1, 2, 3]}},
              "required": ["analysis", "score"]}
    full = ChatRequest(
        messages=({"role": "system", "content": "系统"}, {"role": "user", "content": "写作"}),
        sampling=SamplingParams(temperature=0.7, top_p=0.95, max_tokens=4096, seed=7, stop=("END", "</s>")),
        response_schema=schema, schema_name="leaf_logic", purpose="leaf:logic", template_version="abc123",
        sample_index=2)
    assert cache_key("judge-model", plain) == "caac5aafd0beb3cf4acd9f1b091d9934fd81143a01cf59396bc61e71c2d8c4dc"
    assert cache_key("judge-model", full) == "6dfb1373b50206a2e1d9c7a71d0904686259e37660b8b7c49320236d97fd623e"


async def test_samples_cached_per_index(fake_server: FakeServer, endpoint: EndpointConfig, tmp_path: Path) -> None:
    sampling = SamplingParams(temperature=0.8, seed=10)
    async with open_client(endpoint, workspace=tmp_path) as client:
        for i in range(3):
            await client.chat(req(sampling=sampling, sample_index=i))
    async with open_client(endpoint, workspace=tmp_path) as client:
        results = [await client.chat(req(sampling=sampling, sample_index=i)) for i in range(4)]
    assert [r.from_cache for r in results] == [True, True, True, False]
    assert [r["seed"] for r in fake_server.requests] == [10, 11, 12, 13]


async def test_cache_off_calls_again_but_logs(fake_server: FakeServer, endpoint: EndpointConfig,
                                              tmp_path: Path) -> None:
    for _ in range(2):
        async with open_client(endpoint, workspace=tmp_path, cache_mode="off") as client:
            assert not (await client.chat(req())).from_cache
    assert len(fake_server.requests) == 2
    assert sqlite3.connect(tmp_path / "calls.sqlite").execute("SELECT COUNT(*) FROM calls").fetchone() == (2,)


async def test_replay_serves_hits_and_raises_on_miss(fake_server: FakeServer, endpoint: EndpointConfig,
                                                     tmp_path: Path) -> None:
    async with open_client(endpoint, workspace=tmp_path) as client:
        await client.chat(req("cached"))
    async with open_client(endpoint, workspace=tmp_path, cache_mode="replay") as client:
        assert (await client.chat(req("cached"))).from_cache
        with pytest.raises(CacheMiss):
            await client.chat(req("never seen"))
    assert len(fake_server.requests) == 1


async def test_failures_are_not_served_from_cache(fake_server: FakeServer, endpoint: EndpointConfig,
                                                  tmp_path: Path) -> None:
    fake_server.handler = script(Reply.error(400, "context_length_exceeded"))
    async with open_client(endpoint, workspace=tmp_path) as client:
        assert not (await client.chat(req())).ok
    async with open_client(endpoint, workspace=tmp_path) as client:
        assert (await client.chat(req())).ok
    assert len(fake_server.requests) == 2


async def test_identical_concurrent_requests_share_one_call(fake_server: FakeServer, endpoint: EndpointConfig,
                                                            tmp_path: Path) -> None:
    import asyncio

    fake_server.latency = 0.05
    async with open_client(endpoint, workspace=tmp_path) as client:
        results = await asyncio.gather(*(client.chat(req()) for _ in range(5)))
    assert len(fake_server.requests) == 1
    assert sum(r.from_cache for r in results) == 4 and len({r.text for r in results}) == 1


async def test_max_completion_tokens_and_response_format_modes(fake_server: FakeServer, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), use_max_completion_tokens=True,
                        response_format="json_object")
    fake_server.handler = lambda _req: Reply.json({"score": 2, "reason": "r"})
    async with open_client(ep, workspace=tmp_path) as client:
        result = await client.chat(req(sampling=SamplingParams(max_tokens=64), response_schema=SCORE_SCHEMA))
    sent = fake_server.requests[0]
    assert result.ok and sent["max_completion_tokens"] == 64 and "max_tokens" not in sent
    assert sent["response_format"] == {"type": "json_object"}
    assert len(sent["messages"]) == 1 and sent["messages"][0]["content"].startswith("评分\n\n")
    assert "JSON" in sent["messages"][0]["content"]


async def test_the_body_sent_is_the_request_with_its_messages_encoded_once(fake_server: FakeServer,
                                                                          tmp_path: Path) -> None:
    """In json_schema mode the messages go out as is (the cache key's encoding reused): the server reads exactly
    the request's messages and settings, and the call log stores that same body."""
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,))
    fake_server.handler = lambda _req: Reply.json({"score": 2, "reason": "r"})
    messages = ({"role": "system", "content": "系统 \"说明\"\n"}, {"role": "user", "content": "评分 🙂\t\\"})
    request = ChatRequest(messages=messages, sampling=SamplingParams(temperature=0.3, max_tokens=8, seed=5),
                          response_schema=SCORE_SCHEMA, sample_index=1)
    async with open_client(ep, workspace=tmp_path) as client:
        assert (await client.chat(request)).ok
    sent = fake_server.requests[0]
    assert sent["messages"] == list(messages) and sent["model"] == "m" and sent["temperature"] == 0.3
    assert sent["max_tokens"] == 8 and sent["seed"] == 6 and sent["response_format"]["type"] == "json_schema"
    with sqlite3.connect(tmp_path / "calls.sqlite") as db:
        (stored,) = db.execute("SELECT request_json FROM calls").fetchone()
    assert json.loads(stored) == sent


async def test_waiters_take_over_when_the_shared_call_is_cancelled(fake_server: FakeServer, endpoint: EndpointConfig,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A follower waiting on an identical in-flight call makes the call itself when the leader is cancelled. Each
    step waits for the state it needs (the leader's request at the server, the follower waiting on the shared
    call), never for a guessed time: the leader's reply never comes, the follower's own call is answered."""
    import asyncio
    import types

    import howtobench.llm.client as client_module

    fake_server.handler = script(Reply.text("the leader's: never sent", delay=3600), Reply.text("the follower's"))
    waiting = asyncio.Event()

    def shield(awaitable: asyncio.Future[object]) -> asyncio.Future[object]:
        waiting.set()  # the client shields the shared call only to wait on it
        return asyncio.shield(awaitable)

    monkeypatch.setattr(client_module, "asyncio", types.SimpleNamespace(**{**vars(asyncio), "shield": shield}))
    async with open_client(endpoint, workspace=tmp_path) as client:
        leader = asyncio.ensure_future(client.chat(req()))
        async with asyncio.timeout(10):
            while not fake_server.requests:  # the leader's request is at the server: its call is the shared one
                await asyncio.sleep(0.005)
            follower = asyncio.ensure_future(client.chat(req()))
            await waiting.wait()
        leader.cancel()
        result = await follower
    assert result.ok and not result.from_cache and result.text == "the follower's"
    assert len(fake_server.requests) == 2 and leader.cancelled()


async def test_calls_spread_over_several_base_urls(tmp_path: Path) -> None:
    import asyncio

    with FakeServer(latency=0.02) as one, FakeServer(latency=0.02) as two:
        ep = EndpointConfig(model="m", base_urls=(one.base_url, two.base_url), concurrency=2)
        async with open_client(ep, workspace=tmp_path) as client:
            results = await asyncio.gather(*(client.chat(req(f"q{i}")) for i in range(20)))
    assert all(r.ok for r in results)
    assert len(one.requests) == len(two.requests) == 10
    assert {r.endpoint for r in results} == {one.base_url, two.base_url}


async def test_finish_reason_exposed_and_kept_in_the_cache(fake_server: FakeServer, endpoint: EndpointConfig,
                                                           tmp_path: Path) -> None:
    fake_server.handler = script(Reply.text("cut mid-sent", finish_reason="length"),
                                 Reply.text("x", finish_reason=None))
    async with open_client(endpoint, workspace=tmp_path) as client:
        cut = await client.chat(req("a"))
        silent = await client.chat(req("b"))
    async with open_client(endpoint, workspace=tmp_path) as client:
        again = await client.chat(req("a"))
    assert (cut.ok, cut.text, cut.finish_reason) == (True, "cut mid-sent", "length")
    assert silent.finish_reason is None
    assert again.from_cache and again.finish_reason == "length" and len(fake_server.requests) == 2
