"""The HTTP routes of `howtobench serve` (aiohttp): `/get_reward`, `/v1/score`, `/health`, `/metrics`.

Status codes say whose problem it is: 200 with one reward (or its substitute, or null, and its reason) per
sample; 400 a request that is not of the contract's shape; 429 past `--max-queued` while others are queued, with
`Retry-After` and the flag to raise; 503 with one line when the judge is unusable in a way waiting cannot fix
(401/403/404, a setting, the disk), never a list of numbers. A judge that blinks is waited for inside the request
(service.py), and `/health` says "degraded" (200) meanwhile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ValidationError

from howtobench import strict_json
from howtobench.errors import HowtobenchError
from howtobench.llm.limits import SlotPool
from howtobench.redact import redact_text
from howtobench.serve.answers import get_reward_answer, score_answer, slime_answer
from howtobench.serve.contract import GetRewardRequest, ScoreRequest, ScoreSample, SlimeRequest, describe
from howtobench.serve.samples import ItemIndex, Sample, SampleError, item_of, response_of
from howtobench.serve.service import Overloaded, Rejected, RewardService

SLIME_DEADLINE_S = 110.0  # under the 120 s total timeout of slime's shared aiohttp session (rm_hub/__init__.py)
MAX_BODY_BYTES = 256 * 1024 * 1024  # a batch of long writings; aiohttp's default (1 MiB) refuses a few of them


class BadRequest(ValueError):
    """The request does not follow the contract: 400 with this message."""


C = TypeVar("C", bound=BaseModel)
KNOWN_KEYS: dict[type[BaseModel], dict[int, tuple[str, ...]]] = {  # by depth in the body (`contract.describe`)
    GetRewardRequest: {1: tuple(GetRewardRequest.model_fields)},
    ScoreRequest: {1: tuple(ScoreRequest.model_fields), 3: tuple(ScoreSample.model_fields)},
    SlimeRequest: {1: tuple(SlimeRequest.model_fields)},
}


@dataclass
class Health:
    """Whether the judge answered its preflight (and why not); `pool` shows the judge URLs' circuits."""

    ready: bool = False
    reason: str = "waiting for the judge to answer its preflight"
    pool: SlotPool | None = None

    def problem(self) -> str | None:
        """Why the server cannot answer yet (503), or None."""
        return None if self.ready else self.reason

    def degraded(self) -> str | None:
        """Which judge URLs are out of the pool now (requests wait for them to be probed again), or None."""
        out = self.pool.out_of_pool() if self.pool is not None else []
        if not out or self.pool is None:
            return None
        every = "every judge URL" if len(out) == len(self.pool.urls) else f"{len(out)} of {len(self.pool.urls)} " \
            "judge URLs"
        return f"{every} out of the pool, probed again shortly (requests wait for it): " + "; ".join(out)


@dataclass
class ServeState:
    """What the routes share: the service, the items labels may name, the answer's scale and names."""

    service: RewardService
    items: ItemIndex
    tree_names: Sequence[str] = ()
    scale: float = 1.0
    health: Health = field(default_factory=Health)
    judge_calls: Callable[[], tuple[int, int]] = lambda: (0, 0)  # (fresh calls, cache hits) of the judge client


def parsed(model: type[C], body: Any) -> C:
    """The body as the route's contract type; every problem of it named at once (`BadRequest`, 400)."""
    if not isinstance(body, dict):
        raise BadRequest(f"the body must be a JSON object ({model.__name__}: docs/rl.md)")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(describe(exc, KNOWN_KEYS[model])) from None


def openrlhf_entries(body: Any, items: ItemIndex) -> list[Sample | Rejected]:
    """The samples of an OpenRLHF body `{"query": [...], "prompts": [...], "labels": [...]}`."""
    request = parsed(GetRewardRequest, body)
    labels = request.labels if request.labels is not None else [None] * len(request.query)
    return [_sample(label, prompt, partial(response_of, query, prompt), items)
            for query, prompt, label in zip(request.query, request.prompts, labels, strict=True)]


def _sample(label: Any, prompt: str | None, response: Callable[[], str], items: ItemIndex) -> Sample | Rejected:
    try:
        item = item_of(label, prompt, items)
    except SampleError as exc:
        return Rejected(str(exc))
    try:
        return Sample(item, response())
    except SampleError as exc:
        return Rejected(str(exc), item.id)


def score_entries(body: Any, items: ItemIndex) -> tuple[list[Sample | Rejected], float | None]:
    """The samples of a `/v1/score` body `{"samples": [{"response" | "query"+"prompt", "label"}], "deadline_s"}`."""
    request = parsed(ScoreRequest, body)
    entries = [_sample(s.label, s.prompt, _text_of(s.response, s.query, s.prompt), items) for s in request.samples]
    return entries, request.deadline_s


def _text_of(response: str | None, query: str | None, prompt: str | None) -> Callable[[], str]:
    """The response of a /v1/score sample: given as is, or cut out of its query like OpenRLHF's."""
    if response is not None:
        return lambda: response
    assert query is not None
    return partial(response_of, query, prompt)


def build_app(state: ServeState) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_post("/get_reward", _route(state, "get_reward", _get_reward))
    app.router.add_post("/v1/score", _route(state, "score", _score))
    app.router.add_post("/slime", _route(state, "slime", _slime))

    async def health(request: web.Request) -> web.Response:
        return await _health(state)

    async def metrics(request: web.Request) -> web.Response:
        return await _metrics(state)

    app.router.add_get("/health", health)
    app.router.add_get("/metrics", metrics)
    return app


Handler = Callable[[ServeState, Any], Awaitable[dict[str, Any]]]


def _route(state: ServeState, name: str, handler: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A scoring route: the JSON body in, the answer out, and the error statuses of the module docstring."""
    metrics = state.service.metrics

    async def handle(request: web.Request) -> web.Response:
        started = time.monotonic()
        metrics.requests_in_flight.inc()
        try:
            response = await _answer(state, handler, request)
        finally:
            metrics.requests_in_flight.dec()
        metrics.requests.labels(route=name, status=str(response.status)).inc()
        metrics.request_latency.labels(route=name).observe(time.monotonic() - started)
        return response

    return handle


async def _answer(state: ServeState, handler: Handler, request: web.Request) -> web.Response:
    try:
        body = strict_json.loads(await request.read())  # no NaN, no 100,000-deep nesting (a 400, not a 500)
    except ValueError as exc:
        return web.json_response({"error": f"the body is not JSON: {exc}"}, status=400)
    try:
        return web.json_response(await handler(state, body), dumps=dumps)
    except BadRequest as exc:
        return web.json_response({"error": str(exc)}, status=400)
    except Overloaded as exc:
        return web.json_response({"error": str(exc)}, status=429, headers={"Retry-After": str(exc.retry_after_s)})
    except HowtobenchError as exc:  # run-level: the judge, not the samples
        return web.Response(text=_one_line(exc), status=503, content_type="text/plain")


def _one_line(exc: BaseException) -> str:
    return redact_text(f"{type(exc).__name__}: {exc}").replace("\n", " ") + "\n"


async def _get_reward(state: ServeState, body: Any) -> dict[str, Any]:
    entries = openrlhf_entries(body, state.items)
    outcomes = await state.service.score(entries)
    return get_reward_answer(outcomes, state.tree_names, state.scale)


async def _score(state: ServeState, body: Any) -> dict[str, Any]:
    entries, deadline = score_entries(body, state.items)
    return score_answer(await state.service.score(entries, deadline), state.tree_names)


async def _slime(state: ServeState, body: Any) -> dict[str, Any]:
    """slime's `--rm-type remote_rm`: one `{prompt, response, label}` per request (`slime/rollout/rm_hub`)."""
    entries = slime_entries(body, state.items)
    outcomes = await state.service.score(entries, SLIME_DEADLINE_S)
    return slime_answer(outcomes[0], state.tree_names, state.scale)


def slime_entries(body: Any, items: ItemIndex) -> list[Sample | Rejected]:
    """The one sample of a slime request (`SlimeRequest`)."""
    request = parsed(SlimeRequest, body)
    return [_sample(request.label, request.prompt_text(), lambda: request.response, items)]


async def _health(state: ServeState) -> web.Response:
    problem = state.health.problem()
    if problem is not None:
        return web.Response(text=redact_text(problem) + "\n", status=503, content_type="text/plain")
    degraded = state.health.degraded()
    answer: dict[str, Any] = {"status": "ok" if degraded is None else "degraded",
                              "samples_in_flight": state.service.pending}
    if degraded is not None:
        answer["reason"] = redact_text(degraded)
    return web.json_response(answer)


async def _metrics(state: ServeState) -> web.Response:
    metrics = state.service.metrics
    fresh, hits = state.judge_calls()
    metrics.judge_calls.set(fresh)
    metrics.cache_hits.set(hits)
    if state.health.pool is not None:
        metrics.queue_depth.set(state.health.pool.waiting())
        metrics.judge_concurrency.set(state.health.pool.limit())
    return web.Response(body=metrics.text(), headers={"Content-Type": CONTENT_TYPE_LATEST})


def dumps(value: Any) -> str:
    """JSON as the answers send it (NaN allowed under extra_logs: see answers.py)."""
    return json.dumps(value, ensure_ascii=False)
