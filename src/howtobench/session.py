"""The two ways the step layer (`steps.client.step_client`) opens a model: the configured endpoint, else the
embedded local model (`endpoint_or_local`), and an endpoint's batch API (`batch_client`).

Every command and library step that calls a model (judge, generate, run, perturb, robustness, build, serve, the
`score` API) gets its client from `step_client`, which opens it with these, so the local-model fallback, its
error message and the cache settings behave the same everywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.llm.accounting import load_prices, price_for
from howtobench.llm.batch import BatchSettings, BatchTransport, upper_bound_cost
from howtobench.llm.client import CacheMode, open_client
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.types import LLMClient


@asynccontextmanager
async def endpoint_or_local(
    endpoint: EndpointConfig | None, *, purpose: str = "model", replay: bool = False
) -> AsyncIterator[EndpointConfig]:
    """The configured endpoint, or the embedded llama.cpp server (started here, stopped on exit).

    `purpose` names the role ("judge", "writer", ...) in the error raised when the local model is not installed.
    `replay`: the calls are answered from the cache, so the local model's endpoint is named but no server started.
    """
    if endpoint is not None:
        yield endpoint
        return
    try:
        from howtobench.llm.local import local_endpoint, replay_endpoint_config
    except ImportError as exc:  # the [local] extra is not installed
        raise ConfigError(f"no {purpose} endpoint configured and the local model is unavailable ({exc})") from exc
    if replay:
        yield replay_endpoint_config()
        return
    async with local_endpoint() as local:
        yield local


@asynccontextmanager
async def batch_client(
    endpoint: EndpointConfig | None, *, workspace: Path, settings: BatchSettings, cache_mode: CacheMode = "on",
    purpose: str = "model", report: Callable[[str], None] | None = None, prices: Path | None = None,
    run_id: str | None = None,
) -> AsyncIterator[LLMClient]:
    """A cached client whose calls go through the endpoint's batch API (`llm/batch.py`), priced at batch rates.

    Every request the pipeline makes may be waiting at once (a batch holds thousands), so the endpoint's
    concurrency is raised to a batch's size, its rpm limit dropped and retries sent without backoff (they go out
    together in the next batch). Batches go to the first base URL; the embedded local model has no batch API.
    `prices` adds the user's price table; the batch rate of the model's price bounds what a --max-cost lets it
    submit (`BatchTransport`).
    """
    if endpoint is None:
        raise ConfigError(f"--batch needs a {purpose} endpoint whose server offers /files and /batches "
                          "(OpenAI, or a compatible one); the embedded local model has none")
    wide = endpoint.model_copy(update={"concurrency": settings.max_requests, "rpm": None,
                                       "base_urls": endpoint.base_urls[:1]})
    price = price_for(endpoint.model, load_prices(prices))
    transport = BatchTransport(workspace, settings, report,
                               cost_of=None if price is None else upper_bound_cost(price.at_batch_rate()))
    no_backoff = RetryPolicy(base_s=0.0, max_s=0.0)  # a retried call waits for the next batch, not a backoff
    async with open_client(wide, workspace=workspace, cache_mode=cache_mode, transport=transport,
                           retry=no_backoff, batch_rates=True, prices=prices, run_id=run_id) as client:
        yield client
