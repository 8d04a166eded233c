"""Bounded concurrency per base URL, least-busy spreading, and an optional requests-per-minute limit."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SlotPool:
    """At most `per_url` requests in flight on each base URL; a new request goes to the least busy one.

    "Busy" counts requests in flight plus those already waiting for that URL, so a burst spreads
    evenly instead of queueing behind the first URL. Ties go round-robin. Waiters are served in
    FIFO order, and a freed slot is handed straight to the next waiter — O(1) per call even with
    thousands queued (asyncio.Semaphore in 3.11 scans its waiters on every acquire).
    """

    def __init__(self, urls: tuple[str, ...], per_url: int) -> None:
        self.urls = urls
        self._free = [per_url] * len(urls)
        self._waiters: list[deque[asyncio.Future[None]]] = [deque() for _ in urls]
        self._load = [0] * len(urls)
        self._next = 0

    def _pick(self) -> int:
        n = len(self.urls)
        best = self._next % n
        for step in range(1, n):
            i = (self._next + step) % n
            if self._load[i] < self._load[best]:
                best = i
        self._next = best + 1
        return best

    async def acquire(self) -> int:
        """Wait for a slot; returns the index of its URL (pass it to `release`)."""
        i = self._pick()
        self._load[i] += 1
        if self._free[i] > 0 and not self._waiters[i]:
            self._free[i] -= 1
            return i
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[i].append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted just before the cancel: pass it on
                self.release(i)
            else:
                self._load[i] -= 1
            raise
        return i

    def release(self, i: int) -> None:
        self._load[i] -= 1
        waiters = self._waiters[i]
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot moves to this waiter
                return
            # else: its task was cancelled while waiting (it already left `_load`)
        self._free[i] += 1

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[str]:
        i = await self.acquire()
        try:
            yield self.urls[i]
        finally:
            self.release(i)

    def in_flight(self) -> dict[str, int]:
        return dict(zip(self.urls, self._load, strict=True))


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
