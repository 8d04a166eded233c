"""The batch API reads its replies up to a limit, like a model call: an endless body stops the run, named."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from howtobench.errors import ReplyTooLarge
from howtobench.llm import batch
from howtobench.llm.batch import BatchAPI


@pytest.fixture
async def endless_server() -> AsyncIterator[str]:
    """A batch endpoint whose status reply (no Content-Length) keeps sending until the client hangs up."""
    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        try:
            for _ in range(10_000):  # bounded: 10,000 × 64 KiB, far past any limit the test sets
                await resp.write(b"x" * 65536)
                await asyncio.sleep(0)
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    app = web.Application()
    app.router.add_get("/v1/batches/{batch_id}", endless)
    app.router.add_get("/v1/files/{file_id}/content", endless)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


async def test_an_endless_status_reply_stops_at_the_reply_limit(endless_server: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    api = BatchAPI(endless_server, {})
    try:
        with pytest.raises(ReplyTooLarge, match="over the limit of 16,777,216 bytes"):
            await api.status("batch_1")
    finally:
        await api.close()


async def test_an_output_file_past_its_limit_stops(endless_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "MAX_BATCH_FILE_BYTES", 1 << 20)
    api = BatchAPI(endless_server, {})
    try:
        with pytest.raises(ReplyTooLarge, match="over the limit of 1,048,576 bytes"):
            await api.content("file-1")
    finally:
        await api.close()
