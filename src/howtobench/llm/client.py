"""The one client every model call goes through: OpenAI-compatible chat completions over HTTP.

    async with open_client(endpoint, workspace=ws, cache_mode="on") as client:
        result = await client.chat(ChatRequest(messages=(...), purpose="leaf:logic"))

Per call: cache lookup (key = `cache_key(model, request)`, `keys.py`) -> a slot on the least busy base URL
and a POST with retries (`attempts.py`, the body and reply in the OpenAI dialect of `wire.py`) -> strip
`<think>` -> validate JSON against the request's schema, re-asking at most `endpoint.reasks` times
(`reask.py`) -> one row in the call log, committed at once -> a `ChatResult`.

Cache modes: "on" reads and writes; "off" never reads but still logs; "replay" reads only and
raises `CacheMiss` on a miss (a replay that silently called the model, or silently produced a
failure row, would not be the replay the user asked for). Only successful calls are served
from the cache; a failed call is tried again by the next run.

Failures follow the one rule of `howtobench.errors`. Facts about this prompt come back as
`ChatResult(ok=False, error=..., raw_text=...)`: no valid reply after the re-asks ("BadResponse"),
a prompt too long for the model's context ("ContextTooLong"), a content filter's refusal
("ContentFiltered"). Everything else says the endpoint is unusable and is raised, so the run stops:
a base URL that is not a URL or a key that cannot be sent (`ConfigError`, at once), 401/403/404
and other refusals (`PermanentError`, at once), nothing answering (`Unreachable`: connection
failures open the URL's circuit, see `limits.py`), 429 or 5xx/timeouts outlasting the retries
(`RateLimited` / `TransientError`), a replay miss (`CacheMiss`). Messages name the URL (credentials
redacted, see `howtobench.redact`) and the status, never the key.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from howtobench.config import EndpointConfig
from howtobench.errors import CacheMiss, HowtobenchError, StopAfterSiblings, Unreachable
from howtobench.interrupt import check_drain
from howtobench.llm import structured
from howtobench.llm.accounting import ModelPrice, Price
from howtobench.llm.adaptive import Levels
from howtobench.llm.attempts import Sender
from howtobench.llm.budget import check_budget
from howtobench.llm.cache import STOPPED, CallRecord, CallStore, utc_now
from howtobench.llm.keys import ask_key, cache_key, canonical_json, messages_json
from howtobench.llm.limits import SlotPool
from howtobench.llm.reask import ask_until_accepted
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.transport import AiohttpTransport, Transport
from howtobench.llm.types import ChatRequest, ChatResult, SamplingParams, Usage
from howtobench.llm.wire import Answer, Payload, adds_schema_instruction, api_url, auth_headers, check_base_url
from howtobench.llm.wire import request_body as wire_body
from howtobench.redact import redact_text, redact_url

__all__ = ["PREFLIGHT", "CacheMode", "OpenAIClient", "cache_key", "canonical_json", "check_base_url", "open_client"]

CacheMode = Literal["on", "off", "replay"]
_STORED = {"ok", "text", "data", "reasoning", "raw_text", "finish_reason"}  # what a cache hit gives back


class _LeaderGone(Exception):
    """The in-flight call that identical requests were waiting for raised or was cancelled."""


@dataclass
class _Spent:
    """What the asks of one call cost so far: HTTP attempts and usage (the call itself counted once)."""

    attempts: int = 0
    usage: Usage = field(default_factory=lambda: Usage(calls=1))

    def add(self, answer: Answer) -> None:
        self.attempts += answer.attempts
        self.usage = self.usage + answer.usage


@dataclass
class _Reply:
    """One ask's answer, the key it is kept under, and what reading it found (filled by the check)."""

    answer: Answer
    key: str
    text: str = ""
    reasoning: str | None = None
    data: dict[str, Any] | None = None


# The tiny request of `OpenAIClient.preflight`: one token, no schema, never served from the cache.
PREFLIGHT = ChatRequest(messages=({"role": "user", "content": "ping"},), sampling=SamplingParams(max_tokens=1),
                        purpose="preflight")


class OpenAIClient:
    """An `LLMClient` for one endpoint; build it with `open_client`."""

    def __init__(self, endpoint: EndpointConfig, store: CallStore, transport: Transport, *,
                 cache_mode: CacheMode, run_id: str, retry: RetryPolicy, price: Price | None,
                 seed: int | None = None, batch_rates: bool = False) -> None:
        self.endpoint = endpoint
        self.run_id = run_id
        self._store = store
        self._cache_mode = cache_mode
        self._price = price
        self._public = tuple(redact_url(u) for u in endpoint.base_urls)  # what logs and messages show
        targets = tuple(api_url(check_base_url(u), "/chat/completions") for u in endpoint.base_urls)
        headers = auth_headers(endpoint) if cache_mode != "replay" else {}  # replay never calls out: no key needed
        self._sender = Sender(endpoint, transport, targets=targets, public=self._public, headers=headers,
                              retry=retry, price=price, seed=seed,
                              holds_budget=not batch_rates)  # a batch transport holds --max-cost itself
        self._pool = self._sender.pool
        self._inflight: dict[str, asyncio.Future[ChatResult]] = {}
        self._answers_kept = store.has_answers()  # replies kept by an earlier run (read once: ours need no lookup)
        self._usage: dict[str, Usage] = {}

    @property
    def model(self) -> str:
        return self.endpoint.model

    @property
    def public_urls(self) -> tuple[str, ...]:
        """The base URLs as they may be shown or stored (credentials redacted)."""
        return self._public

    @property
    def levels(self) -> Levels | None:
        """The calls in flight found for each base URL (auto concurrency), None when the setting fixes them."""
        return self._sender.levels

    @property
    def pool(self) -> SlotPool:
        """The per-URL slots and circuits (read by the scoring server's health and metrics)."""
        return self._pool

    def usage_by_purpose(self) -> dict[str, Usage]:
        """What this client spent so far (this run), per request purpose."""
        return dict(self._usage)

    def usage(self) -> Usage:
        return sum(self._usage.values(), Usage())

    async def chat(self, request: ChatRequest) -> ChatResult:
        messages = messages_json(request)
        messages_utf8 = messages.encode()  # hashed for the key and sent in the body: encoded once
        schema_json = canonical_json(request.response_schema)  # in the key, and the validator's key of the schema
        key = cache_key(self.model, request, messages, messages_utf8, schema_json)
        if self._cache_mode != "off":
            stored = self._store.lookup(key)
            if stored is not None:
                return await self._hit(request, key, ChatResult.model_validate(stored))
            if self._cache_mode == "replay":
                miss = CacheMiss(f"replay mode: call {key[:12]} ({request.purpose}, model {self.model}) is not cached")
                await self._record_stop(request, key, miss, utc_now())
                raise miss
        while (pending := self._inflight.get(key)) is not None:  # an identical request is in flight: share it
            try:
                return await self._hit(request, key, await asyncio.shield(pending))
            except _LeaderGone:
                continue  # it failed or was cancelled: make the call ourselves
        check_budget()  # a call that will be sent: refused once --max-cost is reached
        check_drain()  # and once Ctrl-C asked to drain (howtobench/interrupt.py)
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._fresh(request, key, messages, messages_utf8=messages_utf8, schema_json=schema_json)
            future.set_result(result)
            return result
        except BaseException:
            future.set_exception(_LeaderGone())
            future.exception()  # mark retrieved: nobody else may be waiting
            raise
        finally:
            del self._inflight[key]

    # ------------------------------------------------------------------ one call

    async def preflight(self) -> list[str]:
        """One tiny request to each base URL before any work, so a wrong key, model name or URL stops the run
        before it spends anything (logged and accounted as purpose "preflight", never served from the cache).

        Raises what a real call would (`PermanentError`, `ConfigError`, ...) and `Unreachable` when no URL
        answers. Returns one warning per URL that does not answer while another does: its circuit is open,
        so the run goes on without it (the pool's own "left the pool" warning is off meanwhile: these say it once).
        """
        dead: list[str] = []
        self._pool.announce_left = False
        try:
            for i in range(len(self._sender.targets)):
                try:
                    await self._fresh(PREFLIGHT, cache_key(self.model, PREFLIGHT), only=i)
                except Unreachable as exc:
                    dead.append(str(exc))
        finally:
            self._pool.announce_left = True
        if len(dead) == len(self._sender.targets):
            raise Unreachable("; ".join(dead))
        return [f"{d} — going on without it" for d in dead]

    async def _fresh(self, request: ChatRequest, key: str, messages: str | None = None,
                     only: int | None = None, messages_utf8: bytes | None = None,
                     schema_json: str | None = None) -> ChatResult:
        """Send `request` (its `messages_json` and their UTF-8 bytes may be given: reused in the body when it is
        sent as is; and its schema's `canonical_json`)."""
        started, t0 = utc_now(), time.perf_counter()
        as_is = messages if not adds_schema_instruction(self.endpoint, request) else None
        payload = Payload(lambda: wire_body(self.endpoint, request), as_is, messages_utf8 if as_is else None)
        kept: list[str] = []  # the asks whose replies are kept until this call's row is logged
        try:
            result, asks, interrupted = await self._ask_until_valid(request, payload, key, kept, only, schema_json)
        except HowtobenchError as exc:
            if not isinstance(exc, StopAfterSiblings):  # --max-cost, or a call for a batch file: no endpoint fact
                await self._record_stop(request, key, exc, started, payload, time.perf_counter() - t0)
            raise
        result.cache_key, result.latency_s = key, time.perf_counter() - t0
        if self._price is None:  # sent to a model without a price: its cost is unknown, not $0
            result.usage = result.usage.model_copy(update={"unpriced_calls": 1})
        self._account(request.purpose, result.usage)  # (its cost was charged to --max-cost as each answer came)
        await self._store.write(CallRecord(
            key=key, run_id=self.run_id, purpose=request.purpose, model=self.model, status=_status(result),
            started_at=started, endpoint=result.endpoint, request=self._request_text(key, payload, result.ok),
            response=result.model_dump_json(include=_STORED),
            error=result.error, attempts=result.attempts, asks=asks,
            prompt_tokens=result.usage.prompt_tokens, completion_tokens=result.usage.completion_tokens,
            cached_tokens=result.usage.cached_tokens, cost_usd=result.usage.cost_usd, latency_s=result.latency_s,
        ))
        if kept:  # the chain has ended: a later call with this key (--redo-failed) asks afresh
            await self._store.drop_answers(kept)
        if interrupted:
            raise asyncio.CancelledError
        return result

    async def _record_stop(self, request: ChatRequest, key: str, exc: HowtobenchError, started: str,
                           payload: Payload | None = None, latency_s: float = 0.0) -> None:
        """Log a call that stopped the run (401, nothing answering, a replay miss, ...) with status "stopped", so
        `llm usage` shows what stopped a run; the text is scrubbed of keys and credentials. A log that cannot be
        written (disk full) does not hide the error being raised."""
        body = None
        with contextlib.suppress(HowtobenchError, ValueError, TypeError):  # a body that could not be built
            body = self._request_text(key, payload, False) if payload is not None else None
        with contextlib.suppress(HowtobenchError):
            await self._store.write(CallRecord(
                key=key, run_id=self.run_id, purpose=request.purpose, model=self.model, status=STOPPED,
                started_at=started, request=body, error=redact_text(f"{type(exc).__name__}: {exc}"),
                latency_s=latency_s))

    def _request_text(self, key: str, payload: Payload, ok: bool) -> str | None:
        """The body to log with a row: a failed call's body only the first time its key is logged."""
        return payload.text() if ok or not self._store.has_request(key) else None

    async def _hit(self, request: ChatRequest, key: str, stored: ChatResult) -> ChatResult:
        usage = Usage(calls=1, cached_calls=1)
        self._account(request.purpose, usage)
        now = utc_now()
        await self._store.write(CallRecord(key=key, run_id=self.run_id, purpose=request.purpose, model=self.model,
                                      status=_status(stored), started_at=now, finished_at=now, from_cache=True))
        return stored.model_copy(update={"from_cache": True, "cache_key": key, "usage": usage, "latency_s": 0.0})

    async def _ask_until_valid(self, request: ChatRequest, payload: Payload, key: str, kept: list[str],
                               only: int | None = None, schema_json: str | None = None
                               ) -> tuple[ChatResult, int, bool]:
        """Ask; if the reply must match a schema and does not, re-ask with the reason, up to `reasks` times.

        A reply that fails validation is kept at once (`_keep_answer`, its ask's key added to `kept`), before its
        re-ask: a run killed during the chain finds it again and does not pay for it twice. Returns the result, the
        number of asks, and whether the task was cancelled once the last reply was in (`_fresh` logs the call, then
        stops)."""
        spent = _Spent()
        schema = request.response_schema
        schema_key = "" if schema is None else schema_json if schema_json is not None else canonical_json(schema)

        async def ask(extra: list[dict[str, str]]) -> _Reply:
            sent = payload if not extra else Payload.reask(payload, extra)
            this_key = ask_key(key, extra)
            answer = self._kept_answer(this_key, only) or await self._sender.complete(sent, only)
            spent.add(answer)
            return _Reply(answer, this_key)

        async def refusal_of(reply: _Reply) -> tuple[str, str] | None:
            if not reply.answer.ok:
                return None  # a failed call is a fact, not asked again
            reply.text, think = structured.split_reasoning(reply.answer.content)
            reply.reasoning = "\n".join(r for r in (reply.answer.reasoning, think) if r) or None
            if schema is None:
                return None
            reply.data, why = structured.parse_reply(reply.text, schema, schema_key)
            if why is None:
                return None
            kept.append(reply.key)
            await self._keep_answer(reply.key, reply.answer)
            if reply.answer.interrupted:
                raise asyncio.CancelledError
            return reply.text, why

        asked = await ask_until_accepted(ask, refusal_of, self.endpoint.reasks)
        answer = asked.reply.answer
        if not answer.ok:
            return _failure(answer.error or "failed", answer, spent), asked.asks, answer.interrupted
        if asked.refusal is not None:
            reason = f"BadResponse: no valid reply after {asked.asks} asks (last: {asked.refusal[1]})"
            return _failure(reason, answer, spent, raw_text=answer.content), asked.asks, answer.interrupted
        return ChatResult(ok=True, text=asked.reply.text, data=asked.reply.data, reasoning=asked.reply.reasoning,
                          raw_text=answer.content, finish_reason=answer.finish_reason, attempts=spent.attempts,
                          usage=spent.usage, endpoint=answer.endpoint), asked.asks, answer.interrupted

    def _kept_answer(self, ask_key: str, only: int | None) -> Answer | None:
        """The reply kept for this ask by an earlier (killed) run: paid for then, so sent for nothing now. Its
        usage is counted in the call's row, which that run never wrote (the cost is logged once)."""
        if not self._answers_kept or self._cache_mode == "off" or only is not None:
            return None
        kept = self._store.answer(ask_key)
        if kept is None:
            return None
        return Answer(ok=True, content=kept["content"], reasoning=kept.get("reasoning"),
                       finish_reason=kept.get("finish_reason"), endpoint=kept.get("endpoint"),
                       usage=Usage.model_validate(kept.get("usage") or {}))

    async def _keep_answer(self, ask_key: str, answer: Answer) -> None:
        if answer.attempts == 0:
            return  # itself a kept answer
        await self._store.write_answer(ask_key, {
            "content": answer.content, "reasoning": answer.reasoning, "finish_reason": answer.finish_reason,
            "endpoint": answer.endpoint, "usage": answer.usage.model_dump(mode="json")})

    def _account(self, purpose: str, usage: Usage) -> None:
        spent = self._usage.get(purpose)
        # the first usage of a purpose is copied: it is also the caller's `result.usage`, which they may change
        self._usage[purpose] = usage.model_copy() if spent is None else spent + usage


def _status(result: ChatResult) -> str:
    return "ok" if result.ok else "failed"


def _failure(error: str, answer: Answer, spent: _Spent, raw_text: str | None = None) -> ChatResult:
    return ChatResult(ok=False, error=error, raw_text=raw_text, attempts=spent.attempts, usage=spent.usage,
                      endpoint=answer.endpoint, finish_reason=answer.finish_reason)


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


@asynccontextmanager
async def open_client(
    endpoint: EndpointConfig,
    *,
    workspace: Path,
    cache_mode: CacheMode = "on",
    run_id: str | None = None,
    transport: Transport | None = None,
    retry: RetryPolicy | None = None,
    prices: Path | None = None,
    seed: int | None = None,
    batch_rates: bool = False,
    price: ModelPrice | None = None,
) -> AsyncIterator[OpenAIClient]:
    """A client bound to one endpoint and the workspace's call log; closes both on exit.

    The API key is read now from `endpoint.api_key_env` (not in replay mode, which never calls out).
    `transport` swaps the network (tests, `llm/batch.py`); `retry` tunes backoff; `prices` adds a price-table YAML;
    `seed` makes backoff jitter reproducible; `batch_rates` prices calls at the model's batch rate. `price`: the
    model's price as the caller already resolved it (then `prices` is not read again).
    """
    if cache_mode not in ("on", "off", "replay"):
        raise ValueError(f"cache_mode must be 'on', 'off' or 'replay', not {cache_mode!r}")
    resolved = price if price is not None else ModelPrice.look_up(endpoint.model, prices)
    if resolved.model != endpoint.model:
        raise ValueError(f"the price given is {resolved.model}'s, not {endpoint.model}'s")
    store = CallStore.open(workspace)
    net = transport or AiohttpTransport()
    client: OpenAIClient | None = None
    try:
        client = OpenAIClient(
            endpoint, store, net, cache_mode=cache_mode, run_id=run_id or new_run_id(), retry=retry or RetryPolicy(),
            price=resolved.billed(batch_rates=batch_rates), seed=seed, batch_rates=batch_rates,
        )
        yield client
    finally:
        if client is not None and client.levels is not None:
            client.levels.close()
        await net.close()
        store.close()
