"""The one client every model call goes through: OpenAI-compatible chat completions over HTTP.

    async with open_client(endpoint, workspace=ws, cache_mode="on") as client:
        result = await client.chat(ChatRequest(messages=(...), purpose="leaf:logic"))

Per call: cache lookup (key = `cache_key(model, request)`) -> a slot on the least busy base URL
(at most `endpoint.concurrency` in flight per URL, optional rpm limit) -> POST with retries
(see `retry.py`) -> strip `<think>` -> validate JSON against the request's schema, re-asking at
most `endpoint.reasks` times -> one row in the call log, committed at once -> a `ChatResult`.

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
import hashlib
import json
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from howtobench.config import EndpointConfig
from howtobench.errors import (
    CacheMiss,
    ConfigError,
    HowtobenchError,
    LLMError,
    PermanentError,
    RateLimited,
    ReplyTooLarge,
    StopAfterSiblings,
    TransientError,
    Unreachable,
)
from howtobench.llm import structured
from howtobench.llm.accounting import Price, load_prices, price_for
from howtobench.llm.budget import active_budget, charge, check_budget, release, reserve
from howtobench.llm.cache import STOPPED, CallRecord, CallStore, utc_now
from howtobench.llm.limits import Outcome, RpmLimiter, SlotPool
from howtobench.llm.pricing import body_bound_usd
from howtobench.llm.retry import RetryPolicy, classify_status, parse_retry_after
from howtobench.llm.transport import AiohttpTransport, HttpResponse, Transport, TransportError
from howtobench.llm.types import ChatRequest, ChatResult, SamplingParams, Usage
from howtobench.redact import MASK, redact_text, redact_url

CacheMode = Literal["on", "off", "replay"]
_STORED = {"ok", "text", "data", "reasoning", "raw_text", "finish_reason"}  # what a cache hit gives back


# Built once: json.dumps with non-default options constructs a new JSONEncoder on every call (~4 us each,
# twice per model call). Same options, same output. Bodies are compact too: servers read any JSON.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_BODY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def messages_json(request: ChatRequest) -> str:
    """The canonical JSON of a request's messages: the long part of both its cache key and its body."""
    return _CANONICAL.encode(list(request.messages))


def _json_object(fields: Iterable[tuple[str, str]]) -> str:
    """A JSON object from (key, value already encoded as JSON) pairs, in the order given."""
    return "{" + ",".join(f"{_CANONICAL.encode(key)}:{value}" for key, value in fields) + "}"


def cache_key(model: str, request: ChatRequest, messages: str | None = None) -> str:
    """sha256 of what determines the reply — never timeouts, retries, concurrency or the URL.

    The hashed text is the canonical JSON (keys sorted, compact, UTF-8) of the model, the messages, the
    sampling, the response schema and its name, the template version and the sample index. It is put together
    from each field's own encoding, in sorted key order, so the messages — a judge prompt holds the whole
    writing and reference — are encoded once for both the key and the body (`messages`: their
    `messages_json`). tests/llm/test_llm_client.py pins keys: a change here would orphan every cached call.
    """
    fields = (
        ("messages", messages if messages is not None else messages_json(request)),
        ("model", _CANONICAL.encode(model)),
        ("response_schema", _CANONICAL.encode(request.response_schema)),
        ("sample_index", _CANONICAL.encode(request.sample_index)),
        ("sampling", _CANONICAL.encode(request.sampling.model_dump(mode="json"))),
        ("schema_name", _CANONICAL.encode(request.schema_name)),
        ("template_version", _CANONICAL.encode(request.template_version)),
    )
    return hashlib.sha256(_json_object(fields).encode()).hexdigest()


class _LeaderGone(Exception):
    """The in-flight call that identical requests were waiting for raised or was cancelled."""


@dataclass
class _Answer:
    """The outcome of one ask (one completion, after its HTTP retries)."""

    ok: bool
    content: str = ""
    reasoning: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    attempts: int = 0
    endpoint: str | None = None
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False  # the task was cancelled after this answer was read: log it, then stop


class _Payload:
    """The JSON body of one ask, built and serialised on first use, then kept.

    Why lazy: callers gather thousands of `chat()` calls at once, and each runs up to its first
    wait for a slot before any request leaves. Building every body there kept the first
    connections waiting (~0.3 s of dead time for 3000 queued calls in bench/throughput.py); now
    a call builds its body only once it holds a slot, so queued calls cost only their cache key.
    """

    def __init__(self, build: Callable[[], dict[str, Any]], messages_text: str | None = None) -> None:
        self._build = build
        self._messages_text = messages_text  # the body's messages already encoded (the cache key's), if sent as is
        self._body: dict[str, Any] | None = None
        self._text: str | None = None
        self._bytes: bytes | None = None

    @classmethod
    def reask(cls, first: _Payload, extra: list[dict[str, str]]) -> _Payload:
        """The first ask's body with the re-ask messages appended (copied now: `extra` grows later)."""
        body = first.body()
        messages = body["messages"] + extra
        return cls(lambda: {**body, "messages": messages})

    def body(self) -> dict[str, Any]:
        if self._body is None:
            self._body = self._build()
        return self._body

    def text(self) -> str:
        """What the call log stores: the body sent, no headers (so no key)."""
        if self._text is None:
            body, messages = self.body(), self._messages_text
            self._text = _BODY_JSON.encode(body) if messages is None else _json_object(
                (key, messages if key == "messages" else _BODY_JSON.encode(value)) for key, value in body.items())
        return self._text

    def encoded(self) -> bytes:
        if self._bytes is None:
            self._bytes = self.text().encode()
        return self._bytes


@dataclass
class _Retry:
    """Why an attempt gave no answer and may be tried again: "connect", "rate_limited" or "transient"."""

    kind: str
    message: str
    retry_after: float | None = None


_NO_ANSWER = _Answer(ok=False)  # placeholder before the first ask (never returned: the loop runs at least once)
# Transport failures no retry can fix: a setting is wrong (certificate, redirect loop, proxy, URL).
_FATAL_TRANSPORT: dict[str, type[HowtobenchError]] = {
    "tls": ConfigError, "url": ConfigError, "redirect": PermanentError, "proxy": PermanentError,
    "too_large": ReplyTooLarge}
# What a transport failure tells the URL's circuit: a dropped connection proves neither life nor death.
_TRANSPORT_OUTCOME: dict[str, Outcome] = {"connect": "connect_failed", "dropped": "unknown"}
# The tiny request of `OpenAIClient.preflight`: one token, no schema, never served from the cache.
PREFLIGHT = ChatRequest(messages=({"role": "user", "content": "ping"},), sampling=SamplingParams(max_tokens=1),
                        purpose="preflight")


class OpenAIClient:
    """An `LLMClient` for one endpoint; build it with `open_client`."""

    def __init__(self, endpoint: EndpointConfig, store: CallStore, transport: Transport, *,
                 cache_mode: CacheMode, run_id: str, retry: RetryPolicy, price: Price | None,
                 seed: int | None = None) -> None:
        self.endpoint = endpoint
        self.run_id = run_id
        self._store = store
        self._transport = transport
        self._cache_mode = cache_mode
        self._retry = retry
        self._price = price
        self._rng = random.Random(seed)
        self._public = tuple(redact_url(u) for u in endpoint.base_urls)  # what logs and messages show
        self._targets = tuple(_api_url(check_base_url(u), "/chat/completions") for u in endpoint.base_urls)
        self._pool = SlotPool(endpoint.base_urls, endpoint.concurrency, labels=self._public)
        self._rpm = RpmLimiter(endpoint.rpm) if endpoint.rpm else None
        self._headers = _auth_headers(endpoint) if cache_mode != "replay" else {}
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
        key = cache_key(self.model, request, messages)
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
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._fresh(request, key, messages)
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
            for i in range(len(self._targets)):
                try:
                    await self._fresh(PREFLIGHT, cache_key(self.model, PREFLIGHT), only=i)
                except Unreachable as exc:
                    dead.append(str(exc))
        finally:
            self._pool.announce_left = True
        if len(dead) == len(self._targets):
            raise Unreachable("; ".join(dead))
        return [f"{d} — going on without it" for d in dead]

    async def _fresh(self, request: ChatRequest, key: str, messages: str | None = None,
                     only: int | None = None) -> ChatResult:
        """Send `request` (its `messages_json` may be given: reused in the body when it is sent as is)."""
        started, t0 = utc_now(), time.perf_counter()
        as_is = messages if not self._adds_schema_instruction(request) else None
        payload = _Payload(lambda: self._body(request), as_is)
        try:
            result, asks, interrupted = await self._ask_until_valid(request, payload, key, only)
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
        if interrupted:
            raise asyncio.CancelledError
        return result

    async def _record_stop(self, request: ChatRequest, key: str, exc: HowtobenchError, started: str,
                           payload: _Payload | None = None, latency_s: float = 0.0) -> None:
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

    def _request_text(self, key: str, payload: _Payload, ok: bool) -> str | None:
        """The body to log with a row: a failed call's body only the first time its key is logged."""
        return payload.text() if ok or not self._store.has_request(key) else None

    async def _hit(self, request: ChatRequest, key: str, stored: ChatResult) -> ChatResult:
        usage = Usage(calls=1, cached_calls=1)
        self._account(request.purpose, usage)
        now = utc_now()
        await self._store.write(CallRecord(key=key, run_id=self.run_id, purpose=request.purpose, model=self.model,
                                      status=_status(stored), started_at=now, finished_at=now, from_cache=True))
        return stored.model_copy(update={"from_cache": True, "cache_key": key, "usage": usage, "latency_s": 0.0})

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent to the server (what the log stores: no headers, so no key)."""
        messages = [dict(m) for m in request.messages]
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        s = request.sampling
        body["temperature"] = s.temperature
        for name, value in (("top_p", s.top_p), ("stop", list(s.stop) if s.stop else None)):
            if value is not None:
                body[name] = value
        if s.seed is not None:
            body["seed"] = s.seed + request.sample_index  # distinct yet reproducible samples
        if s.max_tokens is not None:
            body["max_completion_tokens" if self.endpoint.use_max_completion_tokens else "max_tokens"] = s.max_tokens
        if request.response_schema is not None:
            fmt = structured.response_format(self.endpoint.response_format, request.response_schema,
                                             request.schema_name, inline_schema=self.endpoint.json_object_schema)
            if fmt is not None:
                body["response_format"] = fmt
            if self._adds_schema_instruction(request):
                structured.add_instruction(messages, structured.schema_instruction(request.response_schema))
        return body

    def _adds_schema_instruction(self, request: ChatRequest) -> bool:
        """A schema the server will not enforce (not `json_schema` mode) is also told to the model in the prompt."""
        return request.response_schema is not None and self.endpoint.response_format != "json_schema"

    async def _ask_until_valid(self, request: ChatRequest, payload: _Payload, key: str,
                               only: int | None = None) -> tuple[ChatResult, int, bool]:
        """Ask; if the reply must match a schema and does not, re-ask with the reason, up to `reasks` times.

        A reply that fails validation is kept at once (`_keep_answer`), before its re-ask: a run killed during the
        chain finds it again and does not pay for it twice. Returns the result, the number of asks, and whether the
        task was cancelled once the last reply was in (`_fresh` logs the call, then stops)."""
        usage, attempts, asks = Usage(calls=1), 0, 0
        schema = request.response_schema
        schema_key = canonical_json(schema) if schema is not None else ""
        extra: list[dict[str, str]] = []
        answer, problem = _NO_ANSWER, ""
        for _ in range(self.endpoint.reasks + 1):
            asks += 1
            ask = payload if not extra else _Payload.reask(payload, extra)
            ask_key = _ask_key(key, extra)
            answer = self._kept_answer(ask_key, only) or await self._complete(ask, only)
            attempts += answer.attempts
            usage = usage + answer.usage
            if not answer.ok:
                return _failure(answer.error or "failed", answer, attempts, usage), asks, answer.interrupted
            text, think = structured.split_reasoning(answer.content)
            reasoning = "\n".join(r for r in (answer.reasoning, think) if r) or None
            if schema is None:
                return ChatResult(ok=True, text=text, reasoning=reasoning, raw_text=answer.content,
                                  finish_reason=answer.finish_reason, attempts=attempts, usage=usage,
                                  endpoint=answer.endpoint), asks, answer.interrupted
            data, why = structured.parse_reply(text, schema, schema_key)
            if why is None:
                return ChatResult(ok=True, text=text, data=data, reasoning=reasoning, raw_text=answer.content,
                                  finish_reason=answer.finish_reason, attempts=attempts, usage=usage,
                                  endpoint=answer.endpoint), asks, answer.interrupted
            problem = why
            await self._keep_answer(ask_key, answer)
            if answer.interrupted:
                raise asyncio.CancelledError
            extra += structured.reask_messages(text, problem)
        reason = f"BadResponse: no valid reply after {asks} asks (last: {problem})"
        return _failure(reason, answer, attempts, usage, raw_text=answer.content), asks, answer.interrupted

    async def _complete(self, payload: _Payload, only: int | None = None) -> _Answer:
        """One completion with HTTP retries (429, 5xx, timeouts, dropped and refused connections back off).

        Returns an answer: a reply, or a failure that is a fact about this prompt. Raises when the
        endpoint is unusable (see the module docstring). `only`: send to that base URL alone (preflight).
        """
        retry, attempt, reserved = _Retry("transient", ""), 0, 0.0
        for attempt in range(1, self.endpoint.max_retries + 2):  # noqa: B007 - `attempt` is reported after
            if self._rpm:
                await self._rpm.wait()
            slot = await self._pool.acquire(only)
            if attempt == 1 and only is None:
                reserved = await self._reserve_holding(slot, payload)
            try:
                answer, retry = await self._attempt(slot, payload, attempt)
            finally:
                release(reserved)  # charged with the real cost when the answer was read (or nothing was spent)
                reserved = 0.0
            if answer is not None:
                return answer
            if only is not None and self._pool.circuits[only].open_until:
                break  # that URL's circuit opened: it does not answer
            if attempt <= self.endpoint.max_retries:
                await asyncio.sleep(self._retry.delay(attempt, retry.retry_after, self._rng,
                                                      connect=retry.kind == "connect"))
        raise _gave_up(retry, attempt, self.model)

    async def _attempt(self, slot: int, payload: _Payload, attempt: int) -> tuple[_Answer | None, _Retry]:
        """One HTTP exchange on base URL `slot`; its outcome goes to that URL's circuit."""
        outcome: Outcome = "unknown"
        failure: TransportError | None = None
        sent_at = self._pool.now()
        try:
            resp = await self._transport.post_json(
                self._targets[slot], payload.encoded(), self._headers, self.endpoint.timeout_s)
            outcome = "reached"
        except TransportError as exc:
            failure = exc
            outcome = _TRANSPORT_OUTCOME.get(exc.kind, "reached")
        finally:
            handed_over = self._pool.release(
                slot, outcome, "" if failure is None else redact_text(str(failure)), sent_at)
        url = self._public[slot]
        if failure is not None:
            fatal = _FATAL_TRANSPORT.get(failure.kind)
            if fatal is not None:
                raise fatal(f"model {self.model} at {url}: {redact_text(str(failure))}")
            kind = "connect" if failure.kind == "connect" else "transient"
            return None, _Retry(kind, redact_text(str(failure)))
        answer, retry = self._read(resp, slot, attempt)
        if answer is not None:
            charge(answer.usage.cost_usd)  # now, before the request that got our slot checks --max-cost
        if handed_over:
            try:
                await _let_the_next_request_go_out()
            except asyncio.CancelledError:  # Ctrl-C just after a paid reply came in: keep it, then stop
                if answer is None:
                    raise
                answer.interrupted = True
        return answer, retry

    def _read(self, resp: HttpResponse, slot: int, attempt: int) -> tuple[_Answer | None, _Retry]:
        """An answer (a reply or a writing-level failure), a reason to retry, or a raised endpoint error."""
        url = self._public[slot]
        if 200 <= resp.status < 300:
            try:
                return _parse_completion(resp.body, url, attempt, self._price), _Retry("ok", "")
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                return None, _Retry("transient", f"{url} answered HTTP {resp.status} {_unreadable(resp.body, exc)}")
        message = redact_text(_error_message(resp.body))
        kind = classify_status(resp.status, message + " " + resp.body[:2000].decode("utf-8", "replace"))
        said = f"{url} answered HTTP {resp.status}: {message}"
        if kind in ("rate_limited", "transient"):
            retry_after = parse_retry_after(resp.headers.get("retry-after") or resp.headers.get("Retry-After"))
            return None, _Retry(kind, said, retry_after)
        if kind == "too_long":
            error = f"ContextTooLong: the prompt does not fit the context of model {self.model}: {said}"
            return _Answer(ok=False, error=error, attempts=attempt, endpoint=url), _Retry("ok", "")
        if kind == "filtered":
            error = f"ContentFiltered: the endpoint's content filter refused this prompt: {said}"
            return _Answer(ok=False, error=error, attempts=attempt, endpoint=url), _Retry("ok", "")
        hint = "follow the redirect yourself: give the final URL" if resp.status < 400 else (
            f"check the base URL, the model name and the API key variable {self.endpoint.api_key_env or '(none)'}")
        raise PermanentError(f"{redact_url(self._targets[slot])} answered HTTP {resp.status} for model {self.model}: "
                             f"{message}. {hint[0].upper()}{hint[1:]}.")

    async def _reserve_holding(self, slot: int, payload: _Payload) -> float:
        """--max-cost again once a slot is ours, and the call's upper-bound cost held until its answer is charged:
        a call that waited for a slot while others spent is refused before it is sent, and calls wait while those
        in flight may use up the limit (so it is passed by at most one call). Returns what to release."""
        if active_budget() is None:
            return 0.0
        try:
            return await reserve(body_bound_usd(self._price, payload.body()) if self._price else 0.0)
        except BaseException:
            self._pool.release(slot)
            raise

    def _kept_answer(self, ask_key: str, only: int | None) -> _Answer | None:
        """The reply kept for this ask by an earlier (killed) run: paid for then, so sent for nothing now. Its
        usage is counted in the call's row, which that run never wrote (the cost is logged once)."""
        if not self._answers_kept or self._cache_mode == "off" or only is not None:
            return None
        kept = self._store.answer(ask_key)
        if kept is None:
            return None
        return _Answer(ok=True, content=kept["content"], reasoning=kept.get("reasoning"),
                       finish_reason=kept.get("finish_reason"), endpoint=kept.get("endpoint"),
                       usage=Usage.model_validate(kept.get("usage") or {}))

    async def _keep_answer(self, ask_key: str, answer: _Answer) -> None:
        if answer.attempts == 0:
            return  # itself a kept answer
        await self._store.write_answer(ask_key, {
            "content": answer.content, "reasoning": answer.reasoning, "finish_reason": answer.finish_reason,
            "endpoint": answer.endpoint, "usage": answer.usage.model_dump(mode="json")})

    def _account(self, purpose: str, usage: Usage) -> None:
        spent = self._usage.get(purpose)
        # the first usage of a purpose is copied: it is also the caller's `result.usage`, which they may change
        self._usage[purpose] = usage.model_copy() if spent is None else spent + usage


async def _let_the_next_request_go_out() -> None:
    """Two turns of the event loop, taken after a response freed a slot that a queued request now holds.

    Why: responses arrive in bursts (many slots started together finish together), and the loop runs every
    callback that is ready before it looks again. Without this, each response of a burst is parsed, checked,
    logged and handed to its judge before any of the queued requests gets to send — the last one waits for the
    whole burst. The queued request runs on the next turn and aiohttp writes its body on the turn after (in a
    task of its own), so after two turns every request of the burst is on the wire and the responses are
    processed while the server works. Measured side by side (bench/saturation.py, bench/throughput.py): +0.02 to
    +0.03 of capacity.
    """
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def _auth_headers(endpoint: EndpointConfig) -> dict[str, str]:
    """The bearer header; a key that cannot travel in an HTTP header is a ConfigError (the key is never echoed)."""
    key = endpoint.api_key()
    if not key:
        return {}
    if not (key.isascii() and key.isprintable()) or any(ch.isspace() for ch in key):
        raise ConfigError(f"the API key in ${endpoint.api_key_env} holds characters an HTTP header cannot carry "
                          "(non-ASCII, spaces or line breaks): check the variable's value")
    if any("@" in urlsplit(u).netloc for u in endpoint.base_urls):
        raise ConfigError(f"model {endpoint.model}: credentials are given both in the base URL and in "
                          f"${endpoint.api_key_env}; keep one")
    return {"Authorization": f"Bearer {key}"}


def check_base_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host; else a ConfigError naming it (redacted) — never retried."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"base URL {redact_url(url)!r} is not an http(s) URL (expected e.g. http://localhost:8000/v1)")
    if MASK in url and redact_url(url) == url:  # e.g. a config.yaml written by a run: credentials are never stored
        raise ConfigError(f"base URL {url!r} holds a redacted credential ({MASK}): give the real URL again with "
                          "--base-url / --judge-base-url, or the key through --api-key-env")
    return url


def _api_url(base: str, path: str) -> str:
    """`path` appended to the base URL's path, keeping its query (Azure-style ?api-version=...) after it."""
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def _ask_key(key: str, extra: list[dict[str, str]]) -> str:
    """The key of one ask of a call: its cache key and the re-ask messages that follow the first ask."""
    return hashlib.sha256((key + canonical_json(extra)).encode()).hexdigest()


def _gave_up(retry: _Retry, attempts: int, model: str) -> LLMError:
    """The run-level error for a call whose retries ran out."""
    tail = f"(gave up after {attempts} attempt{'s' * (attempts != 1)})"
    if retry.kind == "connect":
        return Unreachable(f"model {model}: {retry.message} {tail}")
    if retry.kind == "rate_limited":
        return RateLimited(f"model {model} is rate limited: {retry.message} {tail}")
    return TransientError(f"model {model}: {retry.message} {tail}")


def _status(result: ChatResult) -> str:
    return "ok" if result.ok else "failed"


def _failure(error: str, answer: _Answer, attempts: int, usage: Usage, raw_text: str | None = None) -> ChatResult:
    return ChatResult(ok=False, error=error, raw_text=raw_text, attempts=attempts, usage=usage,
                      endpoint=answer.endpoint, finish_reason=answer.finish_reason)


def _error_message(body: bytes) -> str:
    """The server's own error message, shortened; the raw body when it is not OpenAI-shaped."""
    try:
        parsed = json.loads(body)
        err = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
    except ValueError:
        text = body.decode("utf-8", "replace")
    return text.strip()[:300] or "(empty body)"


def _unreadable(body: bytes, exc: Exception) -> str:
    """Why a 2xx body is no completion, in words: a server's error in a 200 ("with an error: ..."), or what is
    missing ("('choices')" told nothing)."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"with a body that is not JSON: {body[:120].decode('utf-8', 'replace')!r}"
    if isinstance(data, dict) and "error" in data and "choices" not in data:
        return f"with an error instead of a completion: {redact_text(_error_message(body))}"
    if isinstance(exc, KeyError):
        return f"with JSON that is not a chat completion (no {exc.args[0]!r} in it)"
    if isinstance(exc, IndexError):
        return "with a chat completion without any choice"
    return f"with a chat completion it could not read ({exc})"


def _parse_completion(raw: bytes, url: str, attempt: int, price: Price | None) -> _Answer:
    """Content, reasoning and usage of an OpenAI-shaped completion (raises on a malformed body)."""
    data = json.loads(raw)
    choice = data["choices"][0]
    message = choice["message"]
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise TypeError("message content is not a string")
    reasoning = message.get("reasoning_content") or message.get("reasoning") or None
    u = data.get("usage") or {}
    prompt, completion = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
    details = u.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or u.get("prompt_cache_hit_tokens") or 0)
    cost = price.cost(prompt, completion, cached) if price else 0.0
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached, cost_usd=cost)
    finish = choice.get("finish_reason")
    return _Answer(ok=True, content=content, reasoning=reasoning, attempts=attempt, endpoint=url, usage=usage,
                   finish_reason=finish if isinstance(finish, str) else None)


def _price(model: str, prices: Path | None, batch_rates: bool) -> Price | None:
    """The model's price; `batch_rates` for calls sent through the provider's batch API."""
    price = price_for(model, load_prices(prices))
    return price.at_batch_rate() if price is not None and batch_rates else price


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
) -> AsyncIterator[OpenAIClient]:
    """A client bound to one endpoint and the workspace's call log; closes both on exit.

    The API key is read now from `endpoint.api_key_env` (not in replay mode, which never calls out).
    `transport` swaps the network (tests, `llm/batch.py`); `retry` tunes backoff; `prices` adds a price-table YAML;
    `seed` makes backoff jitter reproducible; `batch_rates` prices calls at the model's batch rate.
    """
    if cache_mode not in ("on", "off", "replay"):
        raise ValueError(f"cache_mode must be 'on', 'off' or 'replay', not {cache_mode!r}")
    store = CallStore.open(workspace)
    net = transport or AiohttpTransport()
    try:
        client = OpenAIClient(
            endpoint, store, net, cache_mode=cache_mode, run_id=run_id or new_run_id(), retry=retry or RetryPolicy(),
            price=_price(endpoint.model, prices, batch_rates), seed=seed,
        )
        yield client
    finally:
        await net.close()
        store.close()
