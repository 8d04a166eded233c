"""Run `howtobench serve` until Ctrl-C or SIGTERM: listen, preflight the judge, say where it listens.

Binds 127.0.0.1 by default; any other address is announced with a warning (the server has no authentication,
and every request spends the judge's budget). Port 0 picks a free port; the URL is printed on its own line.
`/health` answers 200 only once the judge answered its preflight: a refusal (401, unknown model) stops the
server with one line, a judge not answering yet (a vLLM still loading) is asked again every `PREFLIGHT_RETRY_S`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from howtobench.errors import EndpointError, PermanentError, TransientError
from howtobench.event_loop import loaded_data_frozen
from howtobench.listen import listening
from howtobench.locks import serve_lock
from howtobench.rate.server import is_loopback
from howtobench.redact import redact_text
from howtobench.serve.app import Health, build_app
from howtobench.serve.setup import ServedClient, ServeSettings, open_service

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
PREFLIGHT_RETRY_S = 5.0


def exposure_warning(host: str) -> str | None:
    if is_loopback(host):
        return None
    return (f"warning: listening on {host}, not 127.0.0.1: anyone who can reach this machine can send requests "
            "and spend the judge's budget (the server has no authentication)")


async def preflight(client: ServedClient, health: Health, say: Callable[[str], None], retry_s: float) -> None:
    """Ask the judge once per base URL until it answers; raise what stops the server (a refusal, a bad setting)."""
    while True:
        try:
            warnings = await client.preflight()
        except (EndpointError, TransientError) as exc:
            if isinstance(exc, PermanentError):
                raise
            health.reason = redact_text(f"the judge does not answer yet ({exc}); asked again every {retry_s:g} s")
            say(health.reason)
            await asyncio.sleep(retry_s)
            continue
        for warning in warnings:
            say(f"warning: judge endpoint: {warning}")
        health.ready, health.reason = True, ""
        say("preflight: the judge answered; /health is 200 from now on")
        return


async def serve(settings: ServeSettings, host: str, port: int, *, say: Callable[[str], None],
                announce: Callable[[str], None], retry_s: float = PREFLIGHT_RETRY_S) -> None:
    """Serve until cancelled or signalled; every judged call is committed to the workspace's cache as it lands.

    `say` gets the status lines, `announce` the URL alone (the CLI prints it on stdout, for scripts to read)."""
    with serve_lock(settings.workspace):  # one server per workspace: a second would pay twice for calls in flight
        await _serve(settings, host, port, say=say, announce=announce, retry_s=retry_s)


async def _serve(settings: ServeSettings, host: str, port: int, *, say: Callable[[str], None],
                 announce: Callable[[str], None], retry_s: float) -> None:
    async with open_service(settings) as (state, client), listening(build_app(state), host, port) as (url, stop):
        warning = exposure_warning(host)
        if warning:
            say(warning)
        items = f"{len(state.items)} benchmark items" if len(state.items) else "no benchmark items (--data)"
        say(f"howtobench serve: {settings.method} judge {client.model}, {items}; OpenRLHF: --reward.remote_url "
            f"{url}/get_reward")
        announce(url)
        if not settings.preflight:
            state.health.ready, state.health.reason = True, ""
        checking = asyncio.ensure_future(preflight(client, state.health, say, retry_s) if settings.preflight
                                         else asyncio.sleep(0))
        waiting = asyncio.ensure_future(stop.wait())
        try:
            with loaded_data_frozen():
                done, _ = await asyncio.wait({checking, waiting}, return_when=asyncio.FIRST_COMPLETED)
                if checking in done and checking.exception() is not None:
                    raise checking.exception()  # type: ignore[misc]
                await waiting
        finally:
            for task in (checking, waiting):
                task.cancel()
