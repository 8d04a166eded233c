"""`PacedGate`: at most `limit` inside, first come first served, and of a burst at most one let in per turn of the
event loop (so the first ones' sockets are looked at while the later ones are still being let in)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from howtobench.concurrency import PacedGate


def turn_counter() -> tuple[Callable[[], int], Callable[[], None]]:
    """(the number of loop turns so far, stop): a callback that re-schedules itself runs once per turn."""
    loop = asyncio.get_running_loop()
    turns = [0]
    running = [True]

    def tick() -> None:
        if running[0]:
            turns[0] += 1
            loop.call_soon(tick)

    loop.call_soon(tick)
    return (lambda: turns[0]), (lambda: running.__setitem__(0, False))


async def test_a_burst_is_let_in_one_per_turn_in_arrival_order_and_never_more_than_the_limit() -> None:
    gate = PacedGate(3)
    now, stop = turn_counter()
    entered: list[tuple[int, int]] = []  # (who, turn)
    inside = peak = 0

    async def one(k: int) -> None:
        nonlocal inside, peak
        async with gate:
            entered.append((k, now()))
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0.01)
            inside -= 1

    await asyncio.gather(*(one(k) for k in range(8)))
    stop()
    assert [k for k, _ in entered] == list(range(8))
    assert peak == 3
    turns = [t for _, t in entered]
    assert len(set(turns)) == len(turns)  # no two let in during the same turn
    assert turns[2] - turns[0] < 10  # the first three within a few turns, not after the first one left


async def test_a_waiter_cancelled_in_the_queue_or_just_let_in_gives_its_place_on() -> None:
    """Each holder stays inside until the test releases it (an event, not a guessed time), so who is queued when a
    cancel comes is fixed by the loop's order alone."""
    gate = PacedGate(1)
    order: list[str] = []

    async def hold(name: str, until: asyncio.Event | None = None) -> None:
        async with gate:
            order.append(name)
            if until is not None:
                await until.wait()

    release_first = asyncio.Event()
    first = asyncio.ensure_future(hold("first", release_first))
    queued = asyncio.ensure_future(hold("queued"))
    last = asyncio.ensure_future(hold("last"))
    await asyncio.sleep(0)  # one turn: `first` is inside, the other two wait in the queue behind it
    assert order == ["first"]
    queued.cancel()  # waiting in the queue: it leaves it
    release_first.set()
    await asyncio.gather(first, last, return_exceptions=True)
    assert order == ["first", "last"] and queued.cancelled()

    # let in (its entry settled) but cancelled before its task ran: the place goes to the next one
    release_holder = asyncio.Event()

    async def hold_then_cancel_the_next() -> None:
        await hold("holder", release_holder)
        victim.cancel()  # in the same step as the leave that let `victim` in

    holder = asyncio.ensure_future(hold_then_cancel_the_next())
    await asyncio.sleep(0)
    victim = asyncio.ensure_future(hold("victim"))
    after = asyncio.ensure_future(hold("after"))
    await asyncio.sleep(0)  # one turn: both wait in the queue behind the holder
    assert order[-1] == "holder"
    release_holder.set()
    await holder
    await asyncio.wait_for(after, 1.0)
    assert victim.cancelled() and order[-2:] == ["holder", "after"]


def test_a_gate_lets_at_least_one_in() -> None:
    with pytest.raises(ValueError, match="at least one"):
        PacedGate(0)
