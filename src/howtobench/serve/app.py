"""The HTTP routes of `howtobench serve` (aiohttp): `/get_reward`, `/v1/score`, `/health`, `/metrics`.

Status codes say whose problem it is: 200 with one reward (or null and its reason) per sample; 400 a request
that is not of the contract's shape; 429 over `--max-pending`, with `Retry-After` (OpenRLHF's client retries); 413 a
request of more samples than `--max-pending` ever admits (no retry can help);
503 with one line when the judge itself is unusable (401, nothing answering, disk), never a list of numbers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from howtobench import strict_json
from howtobench.errors import HowtobenchError
from howtobench.llm.limits import SlotPool
from howtobench.redact import redact_text
from howtobench.serve.answers import get_reward_answer, score_answer
from howtobench.serve.samples import ItemIndex, Sample, SampleError, item_of, response_of
from howtobench.serve.service import Overloaded, Rejected, RewardService, TooLarge
from howtobench.suggest import unknown_name

MAX_BODY_BYTES = 256 * 1024 * 1024  # a batch of long writings; aiohttp's default (1 MiB) refuses a few of them


class BadRequest(ValueError):
    """The request does not follow the contract: 400 with this message."""


@dataclass
class Health:
    """Whether the judge answered its preflight (and why not); `pool` shows the judge URLs' circuits."""

    ready: bool = False
    reason: str = "waiting for the judge to answer its preflight"
    pool: SlotPool | None = None

    def problem(self) -> str | None:
        if not self.ready:
            return self.reason
        out = self.pool.out_of_pool() if self.pool is not None else []
        if self.pool is not None and len(out) == len(self.pool.urls):
            return "every judge URL is out of the pool: " + "; ".join(out)
        return None


@dataclass
class ServeState:
    """What the routes share: the service, the items labels may name, the answer's scale and names."""

    service: RewardService
    items: ItemIndex
    tree_names: Sequence[str] = ()
    scale: float = 1.0
    health: Health = field(default_factory=Health)
    judge_calls: Callable[[], tuple[int, int]] = lambda: (0, 0)  # (fresh calls, cache hits) of the judge client


def openrlhf_entries(body: Any, items: ItemIndex) -> list[Sample | Rejected]:
    """The samples of an OpenRLHF body `{"query": [...], "prompts": [...], "labels": [...]}`."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), list):
        raise BadRequest('the body must be a JSON object with "query": a list of prompt + response texts')
    queries = body["query"]
    prompts = _column(body, "prompts", len(queries), required=True)
    labels = _column(body, "labels", len(queries), required=False)
    return [_entry(q, p, label, items) for q, p, label in zip(queries, prompts, labels, strict=True)]


def _column(body: dict[str, Any], name: str, size: int, *, required: bool) -> list[Any]:
    values = body.get(name)
    if values is None:
        if required:
            raise BadRequest(f'"{name}" is missing: the response is what follows each prompt in its query')
        return [None] * size
    if not isinstance(values, list) or len(values) != size:
        raise BadRequest(f'"{name}" must be a list as long as "query" ({size})')
    return values


def _entry(query: Any, prompt: Any, label: Any, items: ItemIndex) -> Sample | Rejected:
    if not isinstance(query, str) or not (prompt is None or isinstance(prompt, str)):
        raise BadRequest("every query and prompt must be a string")
    return _sample(label, prompt, lambda: response_of(query, prompt), items)


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
    if not isinstance(body, dict) or not isinstance(body.get("samples"), list):
        raise BadRequest('the body must be a JSON object with "samples": a list of {"response", "label"} objects')
    _known_keys(body, SCORE_KEYS, "the body")
    deadline = body.get("deadline_s")
    if deadline is not None and (not strict_json.is_number(deadline) or deadline <= 0):
        raise BadRequest(f'"deadline_s" must be a positive number of seconds, not {json.dumps(deadline)[:40]}')
    entries = []
    for sample in body["samples"]:
        if not isinstance(sample, dict):
            raise BadRequest("every sample must be a JSON object")
        _known_keys(sample, SAMPLE_KEYS, "a sample")
        prompt, response, query = sample.get("prompt"), sample.get("response"), sample.get("query")
        if not all(v is None or isinstance(v, str) for v in (prompt, response, query)) or (response is None) == (
                query is None):
            raise BadRequest('every sample needs "response" (the text) or "query" (prompt + response), as strings')
        entries.append(_sample(sample.get("label"), prompt, _text_of(response, query, prompt), items))
    return entries, None if deadline is None else float(deadline)


SCORE_KEYS = ("samples", "deadline_s")
SAMPLE_KEYS = ("response", "query", "prompt", "label")


def _known_keys(given: dict[str, Any], known: Sequence[str], what: str) -> None:
    """Our own contract (`/v1/score`) refuses a key it does not know: a typo (`deadline`) was silently ignored."""
    for key in given:
        if key not in known:
            raise BadRequest(f"{what} has an {unknown_name('key', str(key)[:40], known)}")


def _text_of(response: str | None, query: str | None, prompt: str | None) -> Callable[[], str]:
    """The response of a /v1/score sample: given as is, or cut out of its query like OpenRLHF's."""
    if response is not None:
        return lambda: response
    assert query is not None
    return lambda: response_of(query, prompt)


def build_app(state: ServeState) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_post("/get_reward", _route(state, "get_reward", _get_reward))
    app.router.add_post("/v1/score", _route(state, "score", _score))

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
    except TooLarge as exc:  # no Retry-After: waiting cannot help
        return web.json_response({"error": str(exc)}, status=413)
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


async def _health(state: ServeState) -> web.Response:
    problem = state.health.problem()
    if problem is not None:
        return web.Response(text=redact_text(problem) + "\n", status=503, content_type="text/plain")
    return web.json_response({"status": "ok", "samples_in_flight": state.service.pending})


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
