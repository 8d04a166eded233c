"""Issue 13, point 1 (client side): facts about a prompt come back as failed results; everything else is raised.

Writing-level (a `ChatResult(ok=False)`, the run goes on): a prompt too long for the model's context, as the
usual servers word it; a content filter's refusal. Run-level (raised, the run stops): a base URL that is not
a URL, a key that cannot travel in a header, refusals, nothing listening, retries spent, a replay miss.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import FAST_RETRY, req

from fake_server import FakeServer, Reply, script
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError, PermanentError, RateLimited, Unreachable, is_run_level
from howtobench.llm.client import open_client
from howtobench.llm.retry import RetryPolicy

# The 400 bodies of the servers people judge with, for a prompt longer than the context.
TOO_LONG_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages "
                         "resulted in 130000 tokens. Please reduce the length of the messages.",
                         "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
    "vllm": {"object": "error", "message": "The decoder prompt (length 5000) is longer than the maximum model length "
             "of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.",
             "type": "BadRequestError", "param": None, "code": 400},
    "llama.cpp": {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing "
                            "it", "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}},
    "llama-cpp-python": {"error": {"message": "Requested tokens (9000) exceed context window of 8192",
                                   "type": "internal_server_error"}},
    "sglang": {"object": "error", "message": "The input (5000 tokens) is longer than the model's context length "
               "(4096 tokens).", "type": "BadRequestError", "param": None, "code": 400},
    "deepseek": {"error": {"message": "This model's maximum context length is 65536 tokens. However, you requested "
                           "70000 tokens (70000 in the messages, 0 in the completion).",
                           "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}},
}


def _raw_reply(status: int, body: dict[str, Any]) -> Reply:
    """A reply whose error body is exactly `body` (the fake server wraps error_message in OpenAI's shape)."""
    return Reply(status=status, error_message=json.dumps(body))


@pytest.mark.parametrize("server", sorted(TOO_LONG_BODIES))
async def test_context_too_long_is_a_failed_row_not_a_stop(server: str, fake_server: FakeServer,
                                                           endpoint: EndpointConfig, tmp_path: Path) -> None:
    fake_server.handler = script(_raw_reply(400, TOO_LONG_BODIES[server]))
    async with open_client(endpoint, workspace=tmp_path, retry=FAST_RETRY) as client:
        long = await client.chat(req("a very long writing"))
        short = await client.chat(req("short"))
    assert not long.ok and (long.error or "").startswith("ContextTooLong: the prompt does not fit the context")
    assert long.attempts == 1 and short.ok and len(fake_server.requests) == 2


async def test_content_filter_refusal_is_a_failed_row(fake_server: FakeServer, endpoint: EndpointConfig,
                                                      tmp_path: Path) -> None:
    fake_server.handler = script(Reply.error(400, "Content Exists Risk"))
    async with open_client(endpoint, workspace=tmp_path, retry=FAST_RETRY) as client:
        refused = await client.chat(req("a writing the filter dislikes"))
    assert refused.error == f"ContentFiltered: the endpoint's content filter refused this prompt: " \
                            f"{fake_server.base_url} answered HTTP 400: Content Exists Risk"


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "http://", "http://host:99999/v1", "localhost:8000/v1"])
async def test_a_base_url_that_is_not_a_url_is_a_config_error_at_once(url: str, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(url,))
    start = time.monotonic()
    with pytest.raises(ConfigError, match="is not an http\\(s\\) URL"):
        async with open_client(ep, workspace=tmp_path):
            pass
    assert time.monotonic() - start < 5 * RetryPolicy().base_s  # no attempt, so no retry's backoff either


@pytest.mark.parametrize("key", ["sk-ключ-123", "sk-1\r\nX-Injected: y", "sk 1"])
async def test_a_key_that_cannot_be_a_header_is_a_config_error(key: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTB_BAD_KEY", key)
    ep = EndpointConfig(model="m", base_urls=("http://127.0.0.1:9/v1",), api_key_env="HTB_BAD_KEY")
    with pytest.raises(ConfigError) as info:
        async with open_client(ep, workspace=tmp_path):
            pass
    assert "HTB_BAD_KEY" in str(info.value) and key not in str(info.value) and "sk-" not in str(info.value)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_nothing_listening_stops_within_seconds_with_default_retries(tmp_path: Path) -> None:
    """Default settings (7 attempts, 1 s backoff base): refused connections open the circuit, not 7 x 30 s."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    ep = EndpointConfig(model="m", base_urls=(url,), concurrency=4)
    start = time.monotonic()
    async with open_client(ep, workspace=tmp_path) as client:
        outcomes = await asyncio.gather(*(client.chat(req(f"q{i}")) for i in range(12)), return_exceptions=True)
    # refused connects open the circuit after a few waits of at most max_connect_s (7 x 30 s and a 1-2-4-... s
    # backoff without it)
    assert time.monotonic() - start < 10 * RetryPolicy().max_connect_s
    assert all(isinstance(o, Unreachable) for o in outcomes), outcomes
    assert all(is_run_level(o) for o in outcomes if isinstance(o, BaseException))
    assert any(f"nothing answers at any base URL: {url} (cannot connect to {url}/chat/completions: Connect call failed"
               in str(o) for o in outcomes)


async def test_one_call_alone_against_a_dead_url_stops_within_seconds(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    start = time.monotonic()
    async with open_client(EndpointConfig(model="m", base_urls=(url,)), workspace=tmp_path, seed=3) as client:
        with pytest.raises(Unreachable, match="nothing answers at any base URL"):
            await client.chat(req())
    assert time.monotonic() - start < 10 * RetryPolicy().max_connect_s  # three refused connects, capped waits


async def test_dns_failure_is_unreachable(tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=("http://no-such-host.invalid/v1",))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(Unreachable, match="no-such-host.invalid"):
            await client.chat(req())


async def test_rate_limit_outlasting_the_retries_raises(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda _req: Reply.rate_limited(0.0)
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), max_retries=2)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(RateLimited, match="answered HTTP 429: rate limit exceeded \\(gave up after 3 attempts\\)"):
            await client.chat(req())
    assert len(fake_server.requests) == 3


async def test_read_timeouts_outlasting_the_retries_raise(fake_server: FakeServer, tmp_path: Path) -> None:
    from howtobench.errors import TransientError

    fake_server.handler = lambda _req: Reply.timeout(5)
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), max_retries=1, timeout_s=0.2)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(TransientError, match="no complete response .* within 0.2 s \\(gave up after 2 attempts\\)"):
            await client.chat(req())


async def test_permanent_error_names_the_url_but_never_credentials(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda _req: Reply.error(401, "invalid api key")
    base = fake_server.base_url.replace("http://", "http://alice:pw-S3CRET@") + "?api-key=S3CRET-Q"
    async with open_client(EndpointConfig(model="m", base_urls=(base,)), workspace=tmp_path) as client:
        with pytest.raises(PermanentError) as info:
            await client.chat(req())
    host = fake_server.base_url.removeprefix("http://")
    assert str(info.value).startswith(f"http://***@{host}/chat/completions?api-key=*** answered HTTP 401 for model m")
    assert "S3CRET" not in str(info.value)
    sent = fake_server.log[-1]
    assert sent.headers["authorization"].startswith("Basic ")  # the userinfo was used, only never shown


def test_retry_policy_caps_waits_after_connection_failures() -> None:
    import random

    policy, rng = RetryPolicy(), random.Random(0)
    assert max(policy.delay(5, None, rng, connect=True) for _ in range(100)) <= 1.0
    assert max(policy.delay(5, None, rng) for _ in range(100)) > 1.0
