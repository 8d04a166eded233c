"""Everything a scoring service needs, opened once: the items labels may name, the judge's client and judges.

Shared by `howtobench serve` and the in-process adapters (`howtobench.rl`), so a reward judged in a trainer's
process and one judged by the server go through the same code, the same cache and the same judge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from howtobench.config import EndpointConfig, resolve_data_dir
from howtobench.data.loader import load_items
from howtobench.data.models import TASKS
from howtobench.guard.guard import Guard, GuardSettings, serve_default
from howtobench.judges.base import Judge, method_info
from howtobench.judges.panel import PanelSpec
from howtobench.llm.client import CacheMode
from howtobench.llm.limits import SlotPool
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient, Usage
from howtobench.serve.app import Health, ServeState
from howtobench.serve.judging import JudgeSet
from howtobench.serve.samples import ItemIndex
from howtobench.serve.service import (
    DEFAULT_DEADLINE_S,
    DEFAULT_FAILED_REWARD,
    DEFAULT_MAX_QUEUED,
    FailedReward,
    RewardService,
)
from howtobench.steps.client import StepClient, panel_clients, step_client
from howtobench.steps.settings import Execution


@dataclass(frozen=True)
class ServeSettings:
    """The judge and the reward rules of a scoring service (no secrets: the endpoint names its key variable)."""

    endpoint: EndpointConfig | None
    workspace: Path
    data_dir: Path | None = None  # None: $HOWTOBENCH_DATA or the user cache, when the benchmark is there
    method: str = "tow"
    options: dict[str, Any] = field(default_factory=dict)
    no_reference: bool = False
    failed_reward: FailedReward = DEFAULT_FAILED_REWARD
    max_queued: int = DEFAULT_MAX_QUEUED
    deadline_s: float = DEFAULT_DEADLINE_S
    group_size: int | None = None  # --group-size: a group's substitute waits (briefly) for all n rollouts
    cache_mode: CacheMode = "on"
    run_id: str = "serve"
    preflight: bool = True  # --no-preflight: /health is 200 from the start
    panel: PanelSpec | None = None  # --panel: every judge of the panel judges, the reward is the panel's score
    guard: GuardSettings = field(default_factory=serve_default)  # --guard flag|skip (guard/): flag by default


class ServedClient(LLMClient, Protocol):
    """What `serve` needs of its judge's client beyond chat: the URLs' slots and circuits (/health, /metrics, the
    patient pool), a preflight, and the calls made so far by purpose (/metrics)."""

    @property
    def pool(self) -> SlotPool | None: ...

    async def preflight(self) -> list[str]: ...

    def usage_by_purpose(self) -> dict[str, Usage]: ...


def served(client: LLMClient) -> ServedClient:
    """The client as `ServedClient`; one that lacks a part of it is a bug, said at start with what is missing."""
    missing = [name for name in ("pool", "preflight", "usage_by_purpose") if not hasattr(client, name)]
    if missing:
        raise TypeError(f"{type(client).__name__} cannot serve a judge: it has no {', '.join(missing)}")
    return cast(ServedClient, client)


class PanelClients:
    """The panel's clients seen as one where the server needs one (`ServedClient`): its name, a preflight of every
    judge (a refusal of any stops the server, each warning names its judge) and the calls of all of them."""

    pool: SlotPool | None = None  # each member's client has its own; /health reports the preflight only

    def __init__(self, members: dict[str, ServedClient]) -> None:
        self.members = members

    @property
    def model(self) -> str:
        return "panel(" + ", ".join(f"{n}={c.model}" for n, c in self.members.items()) + ")"

    async def chat(self, request: ChatRequest) -> ChatResult:
        raise TypeError("a panel is asked through its members' clients, never as one client")

    async def preflight(self) -> list[str]:
        warnings = []
        for name, client in self.members.items():
            warnings += [f"{name}: {w}" for w in await client.preflight()]
        return warnings

    def usage_by_purpose(self) -> dict[str, Usage]:
        total: dict[str, Usage] = {}
        for client in self.members.values():
            for purpose, usage in client.usage_by_purpose().items():
                total[purpose] = total.get(purpose, Usage()) + usage
        return total


def benchmark_items(data_dir: Path | None) -> ItemIndex:
    """The items of --data (an error when it is not a benchmark); without --data those of the default place, or
    none (labels must then carry their instruction)."""
    root = resolve_data_dir(data_dir)
    if data_dir is None and not any((root / task / "aligned.jsonl").is_file() for task in TASKS):
        return ItemIndex([])
    return ItemIndex(load_items(root))


def tree_names(judge: Judge) -> list[str]:
    """The node and leaf ids of a tree-based judge, in tree order (none for other methods)."""
    tree = getattr(judge, "tree", None)
    if tree is None:
        return []
    return [node.id for node in tree.nodes] + [leaf.id for node in tree.nodes for leaf in node.leaves]


def call_counts(client: ServedClient) -> tuple[int, int]:
    """(judge calls made, calls answered from the cache) of the client so far, the preflight left out."""
    by_purpose = client.usage_by_purpose()
    fresh = sum(u.calls - u.cached_calls for p, u in by_purpose.items() if p != "preflight")
    return fresh, sum(u.cached_calls for u in by_purpose.values())


def service_state(client: ServedClient, settings: ServeSettings, items: ItemIndex, in_flight: int | None = None
                  ) -> ServeState:
    """The service over `client`; `in_flight`: samples judged at once (the step layer's number for the judge; the
    rest wait their turn inside their request), None: every admitted sample at once."""
    members = client.members if isinstance(client, PanelClients) else None
    judges = JudgeSet(client, settings.method, settings.options, no_reference=settings.no_reference,
                      panel=settings.panel, members=members, in_flight=in_flight, guard=Guard(settings.guard))
    service = RewardService(judges, failed_reward=settings.failed_reward, max_queued=settings.max_queued,
                            deadline_s=settings.deadline_s, group_size=settings.group_size)
    pool = client.pool
    if pool is not None:
        pool.wait_when_down()  # a judge that blinks is waited for inside the request (service.py)
    return ServeState(service, items, tree_names(judges.for_reference(not settings.no_reference)),
                      method_info(settings.method).score_max, Health(pool=pool),
                      judge_calls=lambda: call_counts(client))


@asynccontextmanager
async def open_service(settings: ServeSettings) -> AsyncIterator[tuple[ServeState, ServedClient]]:
    """The service state over a cached judge client (the embedded local model without an endpoint)."""
    items = benchmark_items(settings.data_dir)
    async with _judge_client(settings) as (client, in_flight):
        state = service_state(client, settings, items, in_flight)
        try:
            yield state, client
        finally:
            await state.service.close()


@asynccontextmanager
async def _judge_client(settings: ServeSettings) -> AsyncIterator[tuple[ServedClient, int]]:
    """The judge's cached client for the service's lifetime (the step layer's live client; with a panel, one per
    judge behind `PanelClients`) and the samples it judges at once (a panel: as many as its narrowest judge takes).
    No preflight here: the server runs its own once it listens (/health)."""
    execution = Execution(workspace=settings.workspace, cache_mode=settings.cache_mode)
    if settings.panel is None:
        async with step_client(settings.endpoint, execution, purpose="judge", run_id=settings.run_id, items=0,
                               check=False) as step:
            yield _served(step), step.in_flight
        return
    async with panel_clients(settings.panel, execution, run_id=settings.run_id, items=0, check=False) as steps:
        yield (PanelClients({name: _served(step) for name, step in steps.items()}),
               min(step.in_flight for step in steps.values()))


def _served(step: StepClient) -> ServedClient:
    assert step.client is not None  # a served judge always calls a model (calls_model is the default)
    return served(step.client)
