"""The one place a step gets its model client: live (the configured endpoint, else the embedded local model),
through the endpoint's batch API, or from batch files the user's engine answers (steps/batch_files.py); its
preflight; and how many writings it keeps in flight.

    async with step_client(endpoint, execution, purpose="judge", run_id=..., items=len(pairs)) as step:
        await run_judge(build_judge(method, step.client, options), pairs, out, concurrency=step.in_flight)

Every command and library step that calls a model (judge, generate, run, perturb, robustness, build, serve, the
`score` API) gets its client here, so the local-model fallback, its error message, the cache settings and the
choice of batch or live are made once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from howtobench.config import AUTO_WRITING_SLOTS, EndpointConfig
from howtobench.errors import ConfigError
from howtobench.judges.panel import PanelSpec
from howtobench.llm.accounting import ModelPrice
from howtobench.llm.batch import BatchSettings, BatchTransport
from howtobench.llm.client import CacheMode, open_client
from howtobench.llm.preflight import preflight_endpoints
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.types import LLMClient
from howtobench.progress import without_eta
from howtobench.steps.batch_files import file_client, price_of_calls
from howtobench.steps.settings import Execution

DEFAULT_IN_FLIGHT = 8  # writings at once without an endpoint (the local model, or metrics that call none)
IN_FLIGHT_PER_SLOT = 2  # writings in flight per judge slot (see `writings_in_flight`)
# writings in flight on batch files: their calls are answered or deferred at once, so more would only hold memory
# (bench/batch_files.py measures it)
FILE_IN_FLIGHT = 256


def writings_in_flight(parallel: int | None, endpoint: EndpointConfig | None,
                       per_slot: int = IN_FLIGHT_PER_SLOT) -> int:
    """Writings judged at once: the user's --parallel, else twice as many as the judge takes calls at once.

    Why twice: a writing also spends time outside its calls (its prompt built, its cache lookup, its call-log
    row committed, its judgment written). With exactly one writing per slot a one-call method left each slot
    idle for all of that (bench/saturation.py: ~0.63 of capacity on an idle machine); with a second writing
    waiting on every slot, a freed slot goes straight to a request that is ready. ToW (several calls per
    writing) keeps the slots busy either way; the client's slots, not this number, bound the calls in flight.

    Under auto concurrency the level is found while running, so the slots counted are at most AUTO_WRITING_SLOTS
    per URL, not the cap (1,024): a writing in flight holds its prompts (a ToW writing's 8, ~300 KB), and sized for
    the cap a ToW run held ~620 MB more. 512 ToW writings are ~3,600 calls, enough for any level up to the cap;
    512 one-call writings keep 512 calls busy, twice the old cap.
    """
    if parallel is not None:
        return parallel
    if endpoint is None:
        return DEFAULT_IN_FLIGHT
    if endpoint.concurrency is not None:
        return per_slot * endpoint.capacity
    return per_slot * min(endpoint.max_concurrency, AUTO_WRITING_SLOTS) * len(endpoint.base_urls)


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
    price = ModelPrice.look_up(endpoint.model, prices)  # once: the batches' bound and the client's accounts
    transport = BatchTransport(workspace, settings, report, cost_of=price_of_calls(price))
    no_backoff = RetryPolicy(base_s=0.0, max_s=0.0)  # a retried call waits for the next batch, not a backoff
    async with open_client(wide, workspace=workspace, cache_mode=cache_mode, transport=transport,
                           retry=no_backoff, batch_rates=True, price=price, run_id=run_id) as client:
        yield client


def _quiet(_line: str) -> None:
    return None


@dataclass(frozen=True)
class StepClient:
    """A step's client (None when the step calls no model) and how many of its writings go in flight at once."""

    client: LLMClient | None
    in_flight: int


@asynccontextmanager
async def step_client(
    endpoint: EndpointConfig | None, execution: Execution, *, purpose: str, run_id: str | None, items: int,
    calls_model: bool = True, per_slot: int = IN_FLIGHT_PER_SLOT, local_in_flight: int | None = DEFAULT_IN_FLIGHT,
    check: bool = True,
) -> AsyncIterator[StepClient]:
    """The client of one step on `endpoint` (None: the embedded local model), chosen by `execution`.

    Batch files: nothing sent, no preflight, `FILE_IN_FLIGHT` writings at once. Batch API: every one of the
    `items` in flight at once (its calls wait for their batch, not for a slot), no preflight (a batch's upload is
    its own cheap check). Live: the preflight first (`check`, unless the caller ran
    it for several steps at once), then `execution.parallel`, else `per_slot` writings per slot of the endpoint;
    on the local model `local_in_flight` (None: `per_slot` per slot of the local server). `run_id`: the call
    log's name for the job (None: a new one per command, for steps that keep none).
    """
    if not calls_model:
        yield StepClient(None, writings_in_flight(execution.parallel, None))
        return
    if execution.files is not None:  # nothing sent: no preflight; calls never wait, so few writings in flight
        if run_id is None:
            raise ValueError("batch files belong to a job: give its run id")
        async with file_client(endpoint, execution.workspace, execution.files, cache_mode=execution.cache_mode,
                               run_id=run_id, purpose=purpose, prices=execution.prices,
                               report=execution.report or _quiet, imported=not check) as answered:
            with without_eta():  # items finish at once or stop deferred: their rate tells nothing of the rest
                yield StepClient(answered, min(max(1, items), FILE_IN_FLIGHT))
        return
    if execution.batch is not None:
        async with batch_client(endpoint, workspace=execution.workspace, settings=execution.batch,
                                cache_mode=execution.cache_mode, purpose=purpose, report=execution.report,
                                prices=execution.prices, run_id=run_id) as batched:
            yield StepClient(batched, max(1, items))
        return
    if check:
        await preflight_endpoints({purpose: endpoint}, enabled=execution.preflight, cache_mode=execution.cache_mode,
                                  workspace=execution.workspace, run_id=run_id)
    async with endpoint_or_local(endpoint, purpose=purpose, replay=execution.cache_mode == "replay") as resolved, \
            open_client(resolved, workspace=execution.workspace, cache_mode=execution.cache_mode, run_id=run_id,
                        prices=execution.prices) as client:
        if endpoint is None and local_in_flight is not None:
            in_flight = execution.parallel if execution.parallel is not None else local_in_flight
        else:
            in_flight = writings_in_flight(execution.parallel, resolved, per_slot)
        yield StepClient(client, in_flight)


@asynccontextmanager
async def panel_clients(panel: PanelSpec, execution: Execution, *, run_id: str | None, items: int,
                        calls_model: bool = True, check: bool = True) -> AsyncIterator[dict[str, StepClient]]:
    """The step client of every judge of `panel`, by member name, opened together and closed together: the one
    way a panel's clients are opened, by the judge and run jobs and by `serve` (the panel's judge is then
    `judges.panel.build_panel` of their clients). Each member's purpose is "judge NAME", so its preflight and its
    errors name it."""
    async with AsyncExitStack() as stack:
        yield {member.name: await stack.enter_async_context(step_client(
            member.endpoint, execution, purpose=f"judge {member.name}", run_id=run_id, items=items,
            calls_model=calls_model, check=check)) for member in panel.judges}
