"""Issue 13, point 2 (library side): `OpenAIClient.preflight` and `check_endpoints`."""

from __future__ import annotations

import io
import socket
import sqlite3
from pathlib import Path

import pytest
from llm_helpers import FAST_RETRY, req
from rich.console import Console

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.errors import PermanentError, Unreachable
from howtobench.llm.client import open_client
from howtobench.llm.preflight import check_endpoints


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def test_one_tiny_logged_request_per_base_url(tmp_path: Path) -> None:
    with FakeServer() as one, FakeServer() as two:
        ep = EndpointConfig(model="m", base_urls=(one.base_url, two.base_url))
        async with open_client(ep, workspace=tmp_path, run_id="r") as client:
            assert await client.preflight() == []
            assert await client.preflight() == []  # never served from the cache
    assert [r["messages"] for r in one.requests + two.requests] == [[{"role": "user", "content": "ping"}]] * 4
    assert one.requests[0]["max_tokens"] == 1 and "response_format" not in one.requests[0]
    rows = sqlite3.connect(tmp_path / "calls.sqlite").execute(
        "SELECT purpose, status, endpoint, from_cache FROM calls").fetchall()
    assert rows == [("preflight", "ok", one.base_url, 0), ("preflight", "ok", two.base_url, 0)] * 2


async def test_a_dead_url_among_live_ones_is_left_out_with_a_warning(tmp_path: Path) -> None:
    dead = _dead_url()
    with FakeServer() as live:
        ep = EndpointConfig(model="m", base_urls=(dead, live.base_url))
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            warnings = await client.preflight()
            assert client._pool.circuits[0].open_until > 0  # out of the pool from the start
            assert (await client.chat(req("after the preflight"))).endpoint == live.base_url
    assert len(warnings) == 1 and warnings[0].startswith(f"model m: cannot connect to {dead}/chat/completions")
    assert warnings[0].endswith("— going on without it")


async def test_no_url_answering_is_unreachable(tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(_dead_url(), _dead_url()))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(Unreachable, match="cannot connect to .*; model m: cannot connect to"):
            await client.preflight()


async def test_a_refusal_stops_at_the_first_url(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda _r: Reply.error(404, "The model `gpt-5o` does not exist")
    ep = EndpointConfig(model="gpt-5o", base_urls=(fake_server.base_url,))
    with pytest.raises(PermanentError, match="answered HTTP 404 for model gpt-5o: The model `gpt-5o` does not exist"):
        await check_endpoints({"judge": ep}, workspace=tmp_path)
    assert len(fake_server.requests) == 1


async def test_check_endpoints_prints_one_line_per_endpoint_and_skips_the_local_model(
        fake_server: FakeServer, tmp_path: Path) -> None:
    out = io.StringIO()
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url.replace("http://", "http://u:S3CRET@"),))
    await check_endpoints({"writer": ep, "judge": ep, "local": None}, workspace=tmp_path,
                          console=Console(file=out, width=200))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("preflight: writer m at http://***@127.0.0.1:")
    assert len(fake_server.requests) == 1  # the same endpoint in two roles is checked once

