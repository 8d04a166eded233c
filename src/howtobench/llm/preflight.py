"""A preflight before spending: one tiny request per endpoint, so a wrong key, model name or URL stops the
run with one line before the first item (issue 13, point 2).

    await check_endpoints({"writer": writer, "judge": judge}, workspace=ws)

Each base URL of each configured endpoint gets one chat completion of one token ("ping"), through the
same client as real calls (same classification, retries, circuit breaker); it is logged in the call log
with purpose "preflight" and never served from the cache. A URL that does not answer while another of the
same endpoint does is reported and left out (its circuit is open); a refusal (401/403/404, unknown model),
a bad URL or no URL answering raises the run-level error a real call would. Commands skip it for
--replay, --dry-run and --batch (nothing is called live) and with --no-preflight.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from rich.console import Console

from howtobench.config import EndpointConfig
from howtobench.llm.client import CacheMode, open_client


async def preflight_endpoints(endpoints: Mapping[str, EndpointConfig | None], *, enabled: bool, cache_mode: CacheMode,
                    workspace: Path, run_id: str | None = None) -> None:
    """`check_endpoints` unless it is turned off (--no-preflight) or a replay (which calls nothing).

    Commands call it after taking their output's lock (a second process refused on a busy output spends
    nothing) and after their --dry-run branch, right before the first item.
    """
    if enabled and cache_mode != "replay":
        await check_endpoints(endpoints, workspace=workspace, run_id=run_id)


async def check_endpoints(endpoints: Mapping[str, EndpointConfig | None], *, workspace: Path,
                          run_id: str | None = None, console: Console | None = None) -> None:
    """Preflight every configured endpoint (None = the embedded local model, started and checked elsewhere)."""
    console = console or Console(stderr=True)
    checked: set[EndpointConfig] = set()
    for role, endpoint in endpoints.items():
        if endpoint is None or endpoint in checked:
            continue
        checked.add(endpoint)
        started = time.perf_counter()
        async with open_client(endpoint, workspace=workspace, cache_mode="off", run_id=run_id) as client:
            warnings = await client.preflight()
            urls = ", ".join(client.public_urls)
        for warning in warnings:
            console.print(f"warning: {role} endpoint: {warning}", style="yellow", highlight=False, markup=False)
        console.print(f"preflight: {role} {endpoint.model} at {urls} answered "
                      f"({time.perf_counter() - started:.1f} s)", style="dim", highlight=False, markup=False)
