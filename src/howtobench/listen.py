"""Serving an aiohttp app on a host and port until SIGINT/SIGTERM: the start-up both servers share (the rating
app of `howtobench rate`, the scoring server of `howtobench serve`)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
from collections.abc import AsyncIterator

from aiohttp import web

from howtobench.errors import OutputError


@contextlib.asynccontextmanager
async def listening(app: web.Application, host: str, port: int) -> AsyncIterator[tuple[str, asyncio.Event]]:
    """`app` listening on host:port for the block: yields its URL (http://host:port, an IPv6 host in brackets,
    port 0 resolved to the one bound) and an event that SIGINT or SIGTERM sets. A port that cannot be had
    stops with one OutputError line; the runner is cleaned up however the block ends."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            hint = "; `--port 0` takes a free one (its URL is printed)" if exc.errno == errno.EADDRINUSE else ""
            raise OutputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from exc
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
        yield f"http://{shown}:{bound_port}", stop
    finally:
        await runner.cleanup()
