"""Concurrent work that stops as a whole: the first exception cancels its siblings, and waits for them.

`asyncio.gather` leaves the other awaitables running when one raises, and a bare `task.cancel()` does
not wait: a run-level error (errors.py) would then return while orphaned model calls kept the endpoint
busy and wrote to a call log being closed. Every place that runs items or calls side by side (the judge
runner, generation, a judgment's leaves, perturbations, the build steps) goes through these two helpers,
so a run stops within seconds of such an error and leaves nothing behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel every unfinished task and wait until all have ended (their outcomes are dropped)."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)
    for task in tasks:  # mark exceptions as retrieved: they were cancelled on purpose or already re-raised
        if not task.cancelled():
            task.exception()


async def gather_or_cancel(*awaitables: Awaitable[T]) -> list[T]:
    """The results of `awaitables` run concurrently, in order; the first exception cancels the rest first."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await cancel_and_wait(tasks)
        raise


@asynccontextmanager
async def as_finished(awaitables: Iterable[Awaitable[T]]) -> AsyncIterator[Iterator[Awaitable[T]]]:
    """Start every awaitable now; iterate over them as they finish. Leaving the block (normally, by an
    exception or a break) cancels and awaits whatever is still running."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        yield asyncio.as_completed(tasks)
    finally:
        await cancel_and_wait(tasks)
