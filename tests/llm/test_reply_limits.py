"""Issue 23, defect 6 (replies): a reply has a size limit and the call's timeout bounds its whole body.

A 300 MB body took 1.3 GB of memory and an endless one ran until MemoryError before the timeout fired. Now a
body over the limit is refused as soon as it passes it (`ReplyTooLarge`, run-level: the endpoint misbehaves,
retrying would read it again), and a body that drips in slowly ends at the call's timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from llm_helpers import FAST_RETRY, req

from howtobench.config import EndpointConfig
from howtobench.errors import ReplyTooLarge, TransientError
from howtobench.llm.client import open_client
from howtobench.llm.transport import AiohttpTransport


async def _endless(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    chunk = b" " * 65536
    while True:
        await resp.write(chunk)


async def _announced(request: web.Request) -> web.Response:
    return web.Response(body=b" " * (3 << 20), content_type="application/json")


async def _drip(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    for _ in range(600):
        await resp.write(b" ")
        await asyncio.sleep(0.05)
    return resp


@pytest.fixture
async def server() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/endless/v1/chat/completions", _endless)
    app.router.add_post("/announced/v1/chat/completions", _announced)
    app.router.add_post("/drip/v1/chat/completions", _drip)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


@pytest.mark.parametrize("route", ["endless", "announced"])
async def test_a_reply_over_the_limit_is_refused(route: str, server: str, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(f"{server}/{route}/v1",), timeout_s=60)
    transport = AiohttpTransport(max_reply_bytes=1 << 20)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY, transport=transport) as client:
        with pytest.raises(ReplyTooLarge, match="sent a reply over the limit of 1,048,576 bytes"):
            await client.chat(req())


async def test_a_slow_drip_body_ends_at_the_timeout(server: str, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(f"{server}/drip/v1",), timeout_s=1.0, max_retries=0)
    started = time.monotonic()
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(TransientError, match="no complete response .* within 1 s"):
            await client.chat(req())
    assert time.monotonic() - started < 10 * ep.timeout_s  # the call's timeout bounds the whole body
