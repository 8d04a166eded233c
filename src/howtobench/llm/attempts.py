"""The attempt loop: one completion sent until it is answered, with the retries HTTP calls for.

A slot on the least busy base URL (at most `endpoint.concurrency` in flight per URL, an optional rpm limit), the
`--max-cost` hold of the call's upper-bound cost, the POST, and what its outcome means: a reply or a writing-level
failure (ContextTooLong, ContentFiltered) is an `Answer`; 429, 5xx, timeouts, dropped and refused connections back
off and try again (`retry.py`; refused connections count against the URL's circuit, `limits.py`); anything that
says the endpoint is unusable is raised (see `llm/client.py`'s docstring). The body and the reply's reading are
the wire dialect's (`llm/wire.py`); caching, re-asks and the call log are the client's.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from howtobench.config import EndpointConfig
from howtobench.errors import (
    ConfigError,
    HowtobenchError,
    LLMError,
    PermanentError,
    RateLimited,
    ReplyTooLarge,
    TransientError,
    Unreachable,
)
from howtobench.interrupt import check_drain, draining, sending
from howtobench.llm.accounting import Price
from howtobench.llm.adaptive import overload, slot_pool
from howtobench.llm.budget import active_budget, charge, release, reserve
from howtobench.llm.limits import Outcome, RpmLimiter
from howtobench.llm.pricing import body_bound_usd
from howtobench.llm.retry import RetryPolicy, classify_status, parse_retry_after
from howtobench.llm.transport import HttpResponse, Transport, TransportError
from howtobench.llm.wire import Answer, Payload, error_message, parse_completion, unreadable
from howtobench.redact import redact_text, redact_url


@dataclass
class Retry:
    """Why an attempt gave no answer and may be tried again: "connect", "rate_limited" or "transient"."""

    kind: str
    message: str
    retry_after: float | None = None


# Transport failures no retry can fix: a setting is wrong (certificate, redirect loop, proxy, URL).
FATAL_TRANSPORT: dict[str, type[HowtobenchError]] = {
    "tls": ConfigError, "url": ConfigError, "redirect": PermanentError, "proxy": PermanentError,
    "too_large": ReplyTooLarge}
# What a transport failure tells the URL's circuit: a dropped connection proves neither life nor death.
TRANSPORT_OUTCOME: dict[str, Outcome] = {"connect": "connect_failed", "dropped": "unknown"}


class Sender:
    """Sends one endpoint's completions: `complete(payload)` returns an `Answer` or raises a run-level error."""

    def __init__(self, endpoint: EndpointConfig, transport: Transport, *, targets: tuple[str, ...],
                 public: tuple[str, ...], headers: dict[str, str], retry: RetryPolicy, price: Price | None,
                 seed: int | None = None, holds_budget: bool = True) -> None:
        self.endpoint, self.targets, self.public = endpoint, targets, public
        # False under a batch transport (or batch files): it holds --max-cost for what it submits, and a hold per
        # call would keep the batch queue from forming
        self._holds_budget = holds_budget
        self._transport, self._headers, self._retry, self._price = transport, headers, retry, price
        self._rng = random.Random(seed)
        self.pool, self.levels = slot_pool(endpoint, public)  # auto concurrency: `levels` moves the pool's limits
        self._rpm = RpmLimiter(endpoint.rpm) if endpoint.rpm else None

    @property
    def model(self) -> str:
        return self.endpoint.model

    async def complete(self, payload: Payload, only: int | None = None) -> Answer:
        """One completion with HTTP retries (429, 5xx, timeouts, dropped and refused connections back off).

        Returns an answer: a reply, or a failure that is a fact about this prompt. Raises when the
        endpoint is unusable (see the module docstring). `only`: send to that base URL alone (preflight).
        """
        retry, attempt = Retry("transient", ""), 0
        for attempt in range(1, self.endpoint.max_retries + 2):  # noqa: B007 - `attempt` is reported after
            if self._rpm:
                await self._rpm.wait()
            slot = await self.pool.acquire(only)
            if draining():  # Ctrl-C while this call waited for a slot (or a retry): not sent (howtobench/interrupt)
                self.pool.release(slot)
                check_drain()
            probe = only is None and self.pool.is_probe(slot)
            reserved = await self._reserve_holding(slot, payload) if only is None else 0.0  # every attempt may cost
            try:
                answer, retry = await self._attempt(slot, payload, attempt, probe)
            finally:
                release(reserved)  # charged with the real cost when the answer was read (or nothing was spent)
            if answer is not None:
                return answer
            if only is not None and self.pool.circuits[only].open_until:
                break  # that URL's circuit opened: it does not answer
            if attempt <= self.endpoint.max_retries:
                await asyncio.sleep(self._retry.delay(attempt, retry.retry_after, self._rng,
                                                      connect=retry.kind == "connect"))
        raise gave_up(retry, attempt, self.model)

    async def _attempt(self, slot: int, payload: Payload, attempt: int, probe: bool = False
                       ) -> tuple[Answer | None, Retry]:
        """One HTTP exchange on base URL `slot`; its outcome goes to that URL's circuit. A circuit's probe is
        shielded: cancelled by its caller (a sibling call of its judgment failed), it still lands and tells the
        circuit the judge is back, or the next request would probe again, be cancelled again, and so on."""
        exchange = self._exchange(slot, payload)
        resp, failure, handed_over = await (asyncio.shield(asyncio.ensure_future(exchange)) if probe else exchange)
        url = self.public[slot]
        if failure is not None:
            fatal = FATAL_TRANSPORT.get(failure.kind)
            if fatal is not None:
                raise fatal(f"model {self.model} at {url}: {redact_text(str(failure))}")
            kind = "connect" if failure.kind == "connect" else "transient"
            return None, Retry(kind, redact_text(str(failure)))
        assert resp is not None
        answer, retry = self._read(resp, slot, attempt)
        if answer is not None:
            charge(answer.usage.cost_usd)  # now, before the request that got our slot checks --max-cost
        if handed_over:
            try:
                await let_the_next_request_go_out()
            except asyncio.CancelledError:  # Ctrl-C just after a paid reply came in: keep it, then stop
                if answer is None:
                    raise
                answer.interrupted = True
        return answer, retry

    async def _exchange(self, slot: int, payload: Payload
                        ) -> tuple[HttpResponse | None, TransportError | None, bool]:
        """The POST and the slot's release with what it told of the URL: (response, failure, slot handed over)."""
        outcome: Outcome = "unknown"
        failure: TransportError | None = None
        resp: HttpResponse | None = None
        sent_at = self.pool.now()
        sent = self.levels.sent(slot) if self.levels is not None else None
        status: int | None = None
        try:
            with sending(self.endpoint.timeout_s):  # counted as in flight, for the wait Ctrl-C shows
                resp = await self._transport.post_json(
                    self.targets[slot], payload.encoded(), self._headers, self.endpoint.timeout_s)
            outcome, status = "reached", resp.status
        except TransportError as exc:
            failure = exc
            outcome = TRANSPORT_OUTCOME.get(exc.kind, "reached")
        finally:
            if sent is not None and self.levels is not None:  # what the outcome says of the URL's load
                self.levels.done(sent, overload(status, None if failure is None else failure.kind))
            handed_over = self.pool.release(
                slot, outcome, "" if failure is None else redact_text(str(failure)), sent_at)
        return resp, failure, handed_over

    def _read(self, resp: HttpResponse, slot: int, attempt: int) -> tuple[Answer | None, Retry]:
        """An answer (a reply or a writing-level failure), a reason to retry, or a raised endpoint error."""
        url = self.public[slot]
        if 200 <= resp.status < 300:
            try:
                return parse_completion(resp.body, url, attempt, self._price), Retry("ok", "")
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                return None, Retry("transient", f"{url} answered HTTP {resp.status} {unreadable(resp.body, exc)}")
        message = redact_text(error_message(resp.body))
        kind = classify_status(resp.status, message + " " + resp.body[:2000].decode("utf-8", "replace"))
        said = f"{url} answered HTTP {resp.status}: {message}"
        if kind in ("rate_limited", "transient"):
            retry_after = parse_retry_after(resp.headers.get("retry-after") or resp.headers.get("Retry-After"))
            return None, Retry(kind, said, retry_after)
        if kind == "too_long":
            error = f"ContextTooLong: the prompt does not fit the context of model {self.model}: {said}"
            return Answer(ok=False, error=error, attempts=attempt, endpoint=url), Retry("ok", "")
        if kind == "filtered":
            error = f"ContentFiltered: the endpoint's content filter refused this prompt: {said}"
            return Answer(ok=False, error=error, attempts=attempt, endpoint=url), Retry("ok", "")
        hint = "follow the redirect yourself: give the final URL" if resp.status < 400 else (
            f"check the base URL, the model name and the API key variable {self.endpoint.api_key_env or '(none)'}")
        raise PermanentError(f"{redact_url(self.targets[slot])} answered HTTP {resp.status} for model {self.model}: "
                             f"{message}. {hint[0].upper()}{hint[1:]}.")

    async def _reserve_holding(self, slot: int, payload: Payload) -> float:
        """--max-cost again once a slot is ours, and the call's upper-bound cost held until its answer is charged:
        a call that waited for a slot while others spent is refused before it is sent, and calls wait while those
        in flight may use up the limit (so it is passed by at most one call). Returns what to release."""
        if active_budget() is None or not self._holds_budget:
            return 0.0
        try:
            return await reserve(body_bound_usd(self._price, payload.body()) if self._price else 0.0)
        except BaseException:
            self.pool.release(slot)
            raise


async def let_the_next_request_go_out() -> None:
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


def gave_up(retry: Retry, attempts: int, model: str) -> LLMError:
    """The run-level error for a call whose retries ran out."""
    tail = f"(gave up after {attempts} attempt{'s' * (attempts != 1)})"
    if retry.kind == "connect":
        return Unreachable(f"model {model}: {retry.message} {tail}")
    if retry.kind == "rate_limited":
        return RateLimited(f"model {model} is rate limited: {retry.message} {tail}")
    return TransientError(f"model {model}: {retry.message} {tail}")
