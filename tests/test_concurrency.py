"""The first exception stops the siblings: they are cancelled and awaited before it propagates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from howtobench.concurrency import as_finished, gather_or_cancel
from howtobench.errors import BudgetExceeded


class Sleeper:
    def __init__(self) -> None:
        self.cancelled: list[int] = []

    async def sleep(self, k: int, seconds: float) -> int:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.append(k)
            raise
        return k


async def boom(after: float) -> int:
    await asyncio.sleep(after)
    raise ValueError("boom")


async def test_gather_or_cancel_keeps_order_and_cancels_the_rest_on_error() -> None:
    s = Sleeper()
    assert await gather_or_cancel(s.sleep(1, 0.02), s.sleep(2, 0.0)) == [1, 2]
    loop = asyncio.get_running_loop()
    start = loop.time()
    hang_s = 60.0
    with pytest.raises(ValueError, match="boom"):
        await gather_or_cancel(s.sleep(3, hang_s), boom(0.01), s.sleep(4, hang_s))
    assert sorted(s.cancelled) == [3, 4]  # already ended when the error arrives, not merely asked to
    assert loop.time() - start < hang_s / 10  # the sleepers were cancelled, not waited for
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_as_finished_cancels_what_runs_when_the_block_is_left() -> None:
    s = Sleeper()
    got = []
    with pytest.raises(ValueError):
        async with as_finished([s.sleep(1, 0.0), boom(0.01), s.sleep(2, 60)]) as finished:
            async for result in finished:
                got.append(result)
    assert got == [1] and s.cancelled == [2]
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def refused(after: float) -> int:
    await asyncio.sleep(after)
    raise BudgetExceeded("--max-cost reached")


async def test_budget_exceeded_lets_the_siblings_finish_before_it_propagates() -> None:
    """--max-cost: the calls already sent finish and are handed out; nothing is cancelled."""
    s = Sleeper()
    with pytest.raises(BudgetExceeded):
        await gather_or_cancel(s.sleep(1, 0.2), refused(0.0), s.sleep(2, 0.1))
    assert s.cancelled == []
    got = []
    with pytest.raises(BudgetExceeded):
        async with as_finished([s.sleep(3, 0.2), refused(0.0), s.sleep(4, 0.1), refused(0.05)]) as finished:
            async for result in finished:
                got.append(result)
    assert got == [4, 3] and s.cancelled == []
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_gather_or_cancel_of_one_awaitable_runs_it_in_place() -> None:
    """One awaitable needs no task of its own: its result, or its exception, comes straight back."""
    async def here() -> asyncio.Task[Any] | None:
        return asyncio.current_task()

    assert await gather_or_cancel(here()) == [asyncio.current_task()]

    async def fails() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        await gather_or_cancel(fails())
