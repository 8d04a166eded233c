"""Concurrent work that stops as a whole: the first exception cancels its siblings, and waits for them.

`asyncio.gather` leaves the other awaitables running when one raises, and a bare `task.cancel()` does
not wait: a run-level error (errors.py) would then return while orphaned model calls kept the endpoint
busy and wrote to a call log being closed. Every place that runs items or calls side by side (the step layer's
runner loop `runloop.run_loop`, a judgment's leaves, a perturbed set kept whole) goes through these two helpers,
so a run stops within seconds of such an error and leaves nothing behind.

Some exceptions stop differently: `StopAfterSiblings`, i.e. `BudgetExceeded` (--max-cost reached: the client
refuses every new call from then on) and `CallsDeferred` (batch-file mode: a call whose answer is in no imported
file). The siblings end soon by themselves; they are waited for instead of cancelled, so the calls already
sent (and paid for) or answered finish, land in the cache and — where the caller writes rows as work finishes —
in the output, and every call still wanted has been asked for, before the stop propagates.

`PacedGate` bounds how much such work is in flight and lets a burst of it in one per turn of the loop (the scoring
server's samples).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from howtobench.errors import StopAfterSiblings
from howtobench.event_loop import loaded_data_frozen

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


async def drain(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Wait for every task to end by itself (outcomes dropped); cancelled and awaited if we are cancelled."""
    tasks = list(tasks)
    try:
        if tasks:
            await asyncio.wait(tasks)
    finally:
        await cancel_and_wait(tasks)


async def gather_or_cancel(*awaitables: Awaitable[T]) -> list[T]:
    """The results of `awaitables` run concurrently, in order; the first exception cancels the rest first
    (`StopAfterSiblings`: lets them end by themselves first, see the module docstring).

    One awaitable is awaited in place: it has no sibling to cancel or wait for, and a task plus a gathering
    future per call was a measurable share of a one-call judge's CPU (bench/saturation.py)."""
    if len(awaitables) == 1:
        return [await awaitables[0]]
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except StopAfterSiblings:
        await drain(tasks)
        raise
    except BaseException:
        await cancel_and_wait(tasks)
        raise


async def _results(tasks: Sequence[asyncio.Future[T]]) -> AsyncGenerator[T, None]:
    """Results in the order they finish; a `StopAfterSiblings` is held until the others have ended."""
    stopped: StopAfterSiblings | None = None
    for next_done in asyncio.as_completed(tasks):
        try:
            yield await next_done
        except StopAfterSiblings as exc:
            # its traceback holds every frame it passed (a writing's prompts and request bodies), and the finished
            # task keeps it: dropped, thousands of stopped writings hold no memory (the stop needs no traceback)
            exc.__traceback__ = None
            stopped = stopped or exc
    if stopped is not None:
        raise stopped


@asynccontextmanager
async def as_finished(awaitables: Iterable[Awaitable[T]]) -> AsyncIterator[AsyncIterator[T]]:
    """Start every awaitable now; `async for` over their results as they finish. Leaving the block (normally, by
    an exception or a break) cancels and awaits whatever is still running. `StopAfterSiblings` from one of them
    is raised only after the others have ended (their results are still handed out)."""
    with loaded_data_frozen():  # the items' data are loaded by now: keep them out of the collector's passes
        tasks = [asyncio.ensure_future(a) for a in awaitables]
        results = _results(tasks)
        try:
            yield results
        finally:
            await results.aclose()
            await cancel_and_wait(tasks)


class PacedGate:
    """At most `limit` holders at once, let in first come first served and at most one per turn of the event loop
    (`async with gate:`).

    Why one per turn: a burst of work that arrives together (a trainer's batch at the scoring server) would otherwise
    all pass a plain semaphore in the same turn of the loop. asyncio runs every callback that is ready before it
    polls a socket again, so every writing then renders its prompts, hashes its cache keys and looks them up before
    the first request leaves or the first reply is read: ~900 ToW calls, a quarter of a second of one core during
    which the judge sat idle (bench/reward_server.py). Let in one per turn, the first writing's calls go out while
    the next one is prepared, and a reply that arrives waits for at most one writing's preparation to be read. Once
    the burst is in, writings are let in as others leave, so the pace costs nothing.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a gate lets at least one in, not {limit}")
        self._free = limit
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._turn_taken = False  # someone was let in during this turn of the loop

    async def __aenter__(self) -> None:
        entry: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(entry)
        self._let_in()
        try:
            await entry  # returns at once when `_let_in` just let this one in
        except asyncio.CancelledError:
            if entry.done() and not entry.cancelled():  # let in just before the cancel: the place goes on
                self._leave()
            raise

    async def __aexit__(self, *_exc: object) -> None:
        self._leave()

    def _leave(self) -> None:
        self._free += 1
        self._let_in()

    def _let_in(self) -> None:
        """Let the first live waiter in, if a place is free and nobody was let in during this turn."""
        while self._waiters and self._free > 0 and not self._turn_taken:
            entry = self._waiters.popleft()
            if entry.done():  # its task was cancelled while it waited
                continue
            entry.set_result(None)
            self._free -= 1
            self._turn_taken = True
            asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        self._turn_taken = False
        self._let_in()
