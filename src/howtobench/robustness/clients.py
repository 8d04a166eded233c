"""Open the LLM client a robustness step needs: the given endpoint, else the embedded local model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.llm.client import CacheMode, open_client
from howtobench.llm.types import LLMClient


@asynccontextmanager
async def endpoint_or_local(endpoint: EndpointConfig | None) -> AsyncIterator[EndpointConfig]:
    """The configured endpoint, or the embedded llama.cpp server (started here, stopped on exit)."""
    if endpoint is not None:
        yield endpoint
        return
    from howtobench.llm.local import local_endpoint

    async with local_endpoint() as local:
        yield local


@asynccontextmanager
async def optional_client(
    needed: bool, endpoint: EndpointConfig | None, *, workspace: Path, cache_mode: CacheMode = "on",
    run_id: str | None = None,
) -> AsyncIterator[LLMClient | None]:
    """A cached client when `needed` (no model is started otherwise), else None."""
    if not needed:
        yield None
        return
    async with AsyncExitStack() as stack:
        resolved = await stack.enter_async_context(endpoint_or_local(endpoint))
        client = await stack.enter_async_context(
            open_client(resolved, workspace=workspace, cache_mode=cache_mode, run_id=run_id)
        )
        yield client
