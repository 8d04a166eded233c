"""Bounded concurrency per base URL, least-busy spreading, a circuit breaker per URL, and an rpm limit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from howtobench.errors import Unreachable

Outcome = Literal["reached", "connect_failed", "unknown"]
log = logging.getLogger(__name__)


@dataclass
class Circuit:
    """The health of one base URL.

    closed (open_until == 0): in the pool. After `trip_after` consecutive connection failures it
    opens: out of the pool until `open_until`. Then half-open: one request (the probe) may try it;
    any answer closes it, a connection failure re-opens it for twice as long (up to the maximum). An answer
    to a request that was sent before the circuit opened (read late, after the URL's refused connections
    tripped it) is old news and does not close it.
    """

    failures: int = 0
    open_until: float = 0.0
    opened_at: float = 0.0  # when it last opened: an answer to a request sent before then does not close it
    cooldown_s: float = 0.0
    probing: bool = False
    last_error: str = ""

    def admits(self, now: float) -> bool:
        """May a new request go to this URL now (closed, or half-open with no probe out)?"""
        return self.open_until == 0.0 or (now >= self.open_until and not self.probing)


class SlotPool:
    """At most `per_url` requests in flight on each base URL; a new request goes to the least busy one.

    "Busy" counts requests in flight plus those already waiting for that URL, so a burst spreads
    evenly instead of queueing behind the first URL. Ties go round-robin. Waiters are served in
    FIFO order, and a freed slot is handed straight to the next waiter — O(1) per call even with
    thousands queued (asyncio.Semaphore in 3.11 scans its waiters on every acquire).

    Circuit breaker: a dead URL fails fast, so it looks idle and least-busy spreading would send it
    ever more traffic. Callers report each request's outcome to `release`; a URL whose connections
    keep failing leaves the pool for a while (see `Circuit`). When no URL is left, `acquire` raises
    `Unreachable` naming each URL and its last error, which stops the run. A long-lived server (`wait_when_down`)
    waits instead: a request with no URL to go to waits for the next probe's turn (or its outcome), so a judge
    that blinks for two seconds costs two seconds, not a failed request; its caller's deadline bounds the wait.
    """

    def __init__(self, urls: tuple[str, ...], per_url: int, *, labels: tuple[str, ...] | None = None,
                 trip_after: int = 3, cooldown_s: float = 10.0, max_cooldown_s: float = 120.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.urls = urls
        self.labels = labels or urls  # what messages show (redacted URLs)
        self.announce_left = True  # warn when a URL leaves the pool (off while a preflight reports them itself)
        self.circuits = [Circuit(cooldown_s=cooldown_s) for _ in urls]
        self._free = [per_url] * len(urls)
        self._limit = [per_url] * len(urls)
        self._waiters: list[deque[asyncio.Future[None]]] = [deque() for _ in urls]
        self._load = [0] * len(urls)
        self._next = 0
        self._trip_after = trip_after
        self._cooldown_s = cooldown_s
        self._max_cooldown_s = max_cooldown_s
        self._clock = clock
        self.patient = False  # `wait_when_down`: no URL left means wait for a probe, not Unreachable
        self._changed: asyncio.Event | None = None  # set when a probe's outcome (or its cancel) is known

    def wait_when_down(self, cooldown_s: float = 1.0, max_cooldown_s: float = 30.0) -> None:
        """For a server: with every URL out of the pool, `acquire` waits for the next probe instead of raising,
        and a URL is probed again after `cooldown_s` (doubling to `max_cooldown_s` while probes fail)."""
        self.patient = True
        self._cooldown_s, self._max_cooldown_s = cooldown_s, max_cooldown_s
        for circuit in self.circuits:
            circuit.cooldown_s = min(circuit.cooldown_s, cooldown_s)

    async def _wait_for_a_circuit(self) -> None:
        """Until a probe may go out (the earliest cooldown's end) or a probe out now has its outcome."""
        now = self._clock()
        due = [c.open_until for c in self.circuits if c.open_until and not c.probing]
        if self._changed is None:
            self._changed = asyncio.Event()
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), max(0.0, min(due) - now) if due else None)

    def _circuit_changed(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _pick(self) -> tuple[int, bool]:
        """The least busy URL whose circuit admits a request, and whether this request is its probe."""
        now = self._clock()
        n = len(self.urls)
        best = -1
        for step in range(n):
            i = (self._next + step) % n
            if self.circuits[i].admits(now) and (best < 0 or self._load[i] < self._load[best]):
                best = i
        if best < 0:
            raise Unreachable(self._unreachable_message())
        circuit = self.circuits[best]
        probe = circuit.open_until != 0.0
        circuit.probing = circuit.probing or probe
        self._next = best + 1
        return best, probe

    def _unreachable_message(self) -> str:
        parts = [f"{label} ({c.last_error or 'connection failures'})"
                 for label, c in zip(self.labels, self.circuits, strict=True)]
        return "nothing answers at any base URL: " + "; ".join(parts)

    async def acquire(self, only: int | None = None) -> int:
        """Wait for a slot; returns the index of its URL (pass it to `release`). Raises `Unreachable`.

        `only` asks for that URL whatever its circuit says (the preflight checks every URL).
        """
        if only is not None:
            await self._take(only)
            return only
        while True:
            try:
                i, probe = self._pick()
            except Unreachable:
                if not self.patient:
                    raise
                await self._wait_for_a_circuit()
                continue
            try:
                await self._take(i)
            except asyncio.CancelledError:
                if probe:
                    self.circuits[i].probing = False
                    self._circuit_changed()
                raise
            if probe or self.circuits[i].open_until == 0.0:
                return i
            self._give_back(i)  # its circuit opened while we waited: go elsewhere

    async def _take(self, i: int) -> None:
        self._load[i] += 1
        if self._free[i] > 0 and not self._waiters[i]:
            self._free[i] -= 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[i].append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted just before the cancel: pass it on
                self._give_back(i)
            else:
                self._load[i] -= 1
            raise

    def is_probe(self, i: int) -> bool:
        """Whether a slot just acquired on URL `i` is its circuit's probe (read right after `acquire`)."""
        return self.circuits[i].open_until != 0.0 and self.circuits[i].probing

    def now(self) -> float:
        """The pool's clock: pass its reading when a request is sent as `release(..., sent_at=)`."""
        return self._clock()

    def release(self, i: int, outcome: Outcome = "unknown", error: str = "", sent_at: float | None = None) -> bool:
        """Free the slot and record what the request told us about the URL; True when a waiting request got it.

        "reached": the server answered (any HTTP status, or a timeout/drop after connecting);
        "connect_failed": no connection (refused, DNS, connect timeout); "unknown": cancelled.
        `sent_at` (`now()` when the request went out): a "reached" from before the circuit opened is ignored.
        """
        circuit = self.circuits[i]
        if circuit.probing or circuit.open_until:
            self._circuit_changed()  # a waiting request may go now (or probe again)
        if outcome == "reached" and sent_at is not None and circuit.open_until and sent_at < circuit.opened_at:
            outcome = "unknown"  # answered on a connection made before the URL's connections started failing
        if outcome == "reached":
            circuit.failures, circuit.open_until, circuit.probing = 0, 0.0, False
            circuit.cooldown_s = self._cooldown_s
        elif outcome == "connect_failed":
            circuit.failures += 1
            circuit.last_error = error
            if circuit.probing:  # the probe failed: out again, for longer
                circuit.cooldown_s = min(self._max_cooldown_s, circuit.cooldown_s * 2)
                circuit.opened_at = self._clock()
                circuit.open_until, circuit.probing = circuit.opened_at + circuit.cooldown_s, False
            elif circuit.open_until == 0.0 and circuit.failures >= self._trip_after:
                circuit.opened_at = self._clock()
                circuit.open_until = circuit.opened_at + circuit.cooldown_s
                self._say_left(i)
        elif circuit.probing:
            circuit.probing = False  # the probe was cancelled: the next request probes again
        return self._give_back(i)

    def _say_left(self, i: int) -> None:
        """Warn that URL `i` left the pool while others carry on: the run keeps going on part of its capacity,
        which must not be silent. With no URL left nothing is said here: `acquire` stops the run naming each."""
        others = sum(1 for j, c in enumerate(self.circuits) if j != i and c.open_until == 0.0)
        if others and self.announce_left:
            circuit = self.circuits[i]
            log.warning("warning: %s left the pool after %d failed connections in a row (%s); calls go to the "
                        "other %d base URL%s, and it is tried again in %g s", self.labels[i], circuit.failures,
                        circuit.last_error, others, "" if others == 1 else "s", circuit.cooldown_s)

    def resize(self, i: int, per_url: int) -> None:
        """URL `i` takes `per_url` at once from now on (`llm/adaptive.py`): new slots go to waiters at once,
        removed ones are retired as their requests end."""
        self._free[i] += per_url - self._limit[i]
        self._limit[i] = per_url
        waiters = self._waiters[i]
        while self._free[i] > 0 and waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                self._free[i] -= 1

    def _give_back(self, i: int) -> bool:
        """The slot goes to the next live waiter (True), or back to the free count (False)."""
        self._load[i] -= 1
        if self._free[i] < 0:  # the limit was lowered: this slot is retired
            self._free[i] += 1
            return False
        waiters = self._waiters[i]
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot moves to this waiter
                return True
            # else: its task was cancelled while waiting (it already left `_load`)
        self._free[i] += 1
        return False

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[str]:
        i = await self.acquire()
        try:
            yield self.urls[i]
        finally:
            self.release(i)

    def limit(self) -> int:
        """Requests the pool lets in flight now, over every URL (moved by `resize`)."""
        return sum(self._limit)

    def in_flight(self) -> dict[str, int]:
        return dict(zip(self.urls, self._load, strict=True))

    def waiting(self) -> int:
        """Requests waiting for a slot on any URL (a long-lived server's queue depth)."""
        return sum(len(w) for w in self._waiters)

    def out_of_pool(self) -> list[str]:
        """The URLs (as shown) whose circuit is open now, with their last error."""
        now = self._clock()
        return [f"{label} ({c.last_error or 'connection failures'})"
                for label, c in zip(self.labels, self.circuits, strict=True) if not c.admits(now)]


class RpmLimiter:
    """Spaces request starts evenly: at most `rpm` per minute, without bursts."""

    def __init__(self, rpm: int) -> None:
        self._interval = 60.0 / rpm
        self._next = 0.0

    async def wait(self) -> None:
        now = asyncio.get_running_loop().time()
        start = max(now, self._next)
        self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)
