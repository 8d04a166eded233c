"""Bounded concurrency per base URL, least-busy spreading, and an optional requests-per-minute limit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SlotPool:
    """At most `per_url` requests in flight on each base URL; a new request goes to the least busy one.

    "Busy" counts requests in flight plus those already waiting for that URL, so a burst spreads
    evenly instead of queueing behind the first URL. Ties go round-robin.
    """

    def __init__(self, urls: tuple[str, ...], per_url: int) -> None:
        self.urls = urls
        self._sems = [asyncio.Semaphore(per_url) for _ in urls]
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

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[str]:
        i = self._pick()
        self._load[i] += 1
        try:
            async with self._sems[i]:
                yield self.urls[i]
        finally:
            self._load[i] -= 1

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
