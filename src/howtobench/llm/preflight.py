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
from howtobench.llm.client import PREFLIGHT, CacheMode, open_client
from howtobench.llm.dryrun import Estimate, price_plan
from howtobench.llm.pricing import MODES


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
    for role, endpoint in to_check(endpoints):
        started = time.perf_counter()
        async with open_client(endpoint, workspace=workspace, cache_mode="off", run_id=run_id) as client:
            warnings = await client.preflight()
            urls = client.public_urls
        for warning in warnings:
            console.print(f"warning: {role} endpoint: {warning}", style="yellow", highlight=False, markup=False)
        console.print(f"preflight: {role} {endpoint.model} {_answered(urls, len(warnings))} "
                      f"({time.perf_counter() - started:.1f} s)", style="dim", highlight=False, markup=False)


def _answered(urls: tuple[str, ...] | list[str], dead: int) -> str:
    """Which URLs answered: all of them by name, else how many (the warnings above name each dead one) — the
    line listed every URL as answered even when one had just been reported dead."""
    if not dead:
        return f"at {', '.join(urls)} answered"
    return f"answered at {len(urls) - dead} of {len(urls)} base URLs"


def to_check(endpoints: Mapping[str, EndpointConfig | None]) -> list[tuple[str, EndpointConfig]]:
    """(role, endpoint) of each configured endpoint, once (the same endpoint in two roles is checked once)."""
    checked: set[EndpointConfig] = set()
    out = []
    for role, endpoint in endpoints.items():
        if endpoint is not None and endpoint not in checked:
            checked.add(endpoint)
            out.append((role, endpoint))
    return out


def with_preflight(estimates: list[Estimate], endpoints: Mapping[str, EndpointConfig | None],
                   prices: Path | None = None) -> list[Estimate]:
    """The estimates with the preflight's tiny calls added (one per base URL of each endpoint `check_endpoints`
    would check), as purpose "preflight" of the role's estimate, or a line of its own when the role has none."""
    out = list(estimates)
    for role, endpoint in to_check(endpoints):
        extra = price_plan(role, endpoint.model, [PREFLIGHT] * len(endpoint.base_urls), prices)
        target = next((e for e in out if e.role.split(" ")[0] == role and e.model == endpoint.model), None)
        if target is None:
            out.append(extra)
            continue
        target.by_purpose = {**target.by_purpose, "preflight": extra.by_purpose["preflight"]}
        if target.priced and extra.priced:
            target.modes = {mode: _plus(target.modes.get(mode), extra.modes.get(mode)) for mode in MODES}
            target.expected_usd = _plus(target.expected_usd, extra.expected_usd)
        target.expected_completion_tokens += extra.expected_completion_tokens
    return out


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b
