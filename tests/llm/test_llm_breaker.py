"""Issue 13, point 3: a circuit breaker per base URL in the least-busy pool."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from llm_helpers import FAST_RETRY, req

from fake_server import FakeServer, hold_port
from howtobench.config import EndpointConfig
from howtobench.errors import Unreachable
from howtobench.llm.client import open_client
from howtobench.llm.limits import SlotPool


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _use(pool: SlotPool, outcome: str, error: str = "") -> int:
    i = await pool.acquire()
    pool.release(i, outcome, error)  # type: ignore[arg-type]
    return i


async def test_three_connection_failures_take_a_url_out_then_a_probe_brings_it_back() -> None:
    clock = Clock()
    pool = SlotPool(("a", "b"), per_url=4, trip_after=3, cooldown_s=10, max_cooldown_s=25, clock=clock)
    for _ in range(2):  # a fails, b answers, alternately: a is still in the pool after two failures
        assert await _use(pool, "connect_failed", "refused") == 0
        assert await _use(pool, "reached") == 1
    assert await _use(pool, "connect_failed", "refused") == 0  # third consecutive failure: a is out
    assert [await _use(pool, "reached") for _ in range(5)] == [1] * 5
    clock.now += 10  # cooldown over: the next request probes a, and only that one
    probe = await pool.acquire()
    assert probe == 0 and await _use(pool, "reached") == 1
    pool.release(probe, "connect_failed", "refused")  # the probe fails: out for twice as long
    clock.now += 19
    assert await _use(pool, "reached") == 1
    clock.now += 1
    assert await _use(pool, "reached") == 0  # a successful probe closes the circuit
    assert [await _use(pool, "reached") for _ in range(4)] == [1, 0, 1, 0]


async def test_an_answer_resets_the_count_and_none_left_is_unreachable() -> None:
    pool = SlotPool(("a",), per_url=2, labels=("http://***@a/v1",), trip_after=3)
    for outcome in ("connect_failed", "connect_failed", "reached", "connect_failed", "connect_failed"):
        await _use(pool, outcome, "cannot connect: refused")
    assert pool.circuits[0].open_until == 0.0  # the answer in between reset the count
    await _use(pool, "connect_failed", "cannot connect: refused")
    with pytest.raises(Unreachable) as info:
        await pool.acquire()
    assert str(info.value) == "nothing answers at any base URL: http://***@a/v1 (cannot connect: refused)"


async def test_waiters_queued_on_a_url_that_trips_go_elsewhere() -> None:
    pool = SlotPool(("a", "b"), per_url=1, trip_after=1)
    first_a, first_b = await pool.acquire(), await pool.acquire()
    queued = asyncio.ensure_future(pool.acquire())  # waits behind a (round robin)
    await asyncio.sleep(0)
    pool.release(first_a, "connect_failed", "refused")  # a trips; its slot goes to the waiter, which moves on
    await asyncio.sleep(0)
    assert not queued.done()
    pool.release(first_b, "reached")
    assert await asyncio.wait_for(queued, 1) == 1


async def test_cancelled_probe_lets_the_next_request_probe() -> None:
    clock = Clock()
    pool = SlotPool(("a", "b"), per_url=1, trip_after=1, cooldown_s=1, clock=clock)
    await _use(pool, "connect_failed")
    assert await pool.acquire() == 1  # held: b is busy
    clock.now += 1
    probe = await pool.acquire()
    assert probe == 0 and pool.circuits[0].probing
    pool.release(probe)  # cancelled: outcome unknown
    assert not pool.circuits[0].probing and await pool.acquire() == 0


async def test_a_late_answer_sent_before_the_url_failed_does_not_close_its_circuit() -> None:
    """A reply read after the URL's refused connections tripped its circuit is old news; a probe's answer is not."""
    clock = Clock()
    pool = SlotPool(("a",), per_url=4, trip_after=3, cooldown_s=10, clock=clock)
    slow = await pool.acquire()  # a request to a, sent at t=100, answered late
    sent_at = pool.now()
    clock.now = 101.0
    assert [await _use(pool, "connect_failed", "refused") for _ in range(3)] == [0, 0, 0]  # a dies: it trips
    assert pool.circuits[0].open_until == 111.0
    pool.release(slow, "reached", sent_at=sent_at)  # its answer arrives now: a stays out
    assert pool.circuits[0].open_until == 111.0 and pool.circuits[0].failures >= 3
    clock.now = 112.0
    probe = await pool.acquire()
    assert probe == 0
    pool.release(probe, "reached", sent_at=pool.now())  # the probe's answer is news: a is back
    assert pool.circuits[0].open_until == 0.0


async def test_three_servers_one_killed_mid_run_the_run_finishes_on_the_other_two(tmp_path: Path) -> None:
    # The victim's port stays held after its death. Without that, on a busy machine another process's test server
    # could bind the freed port: the victim's URL then answered again (a half-open probe after the 10 s cooldown
    # found a live server there) and its circuit ended closed — the flaky `open_until == 0`.
    holder = hold_port()
    servers = [FakeServer(latency=0.03).start(),
               FakeServer(latency=0.03, port=holder.getsockname()[1], reuse_port=True).start(),
               FakeServer(latency=0.03).start()]
    victim = servers[1]
    ep = EndpointConfig(model="m", base_urls=tuple(s.base_url for s in servers), concurrency=4, timeout_s=5)
    n, after = 240, 60

    async def kill_mid_run() -> None:
        while len(victim.requests) < n // 10:
            await asyncio.sleep(0.002)
        await asyncio.to_thread(victim.stop)

    try:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            killer = asyncio.ensure_future(kill_mid_run())
            results = await asyncio.gather(*(client.chat(req(f"item {i}")) for i in range(n)))
            await killer  # the victim is surely gone now: the calls that follow cannot reach it
            results += await asyncio.gather(*(client.chat(req(f"item {i}")) for i in range(n, n + after)))
            circuit = client._pool.circuits[1]
    finally:
        for server in servers:
            server.stop()
        holder.close()
    assert all(r.ok for r in results) and len(results) == n + after
    assert circuit.open_until > 0 and "cannot connect" in circuit.last_error
    served = [len(s.requests) for s in servers]
    assert n // 10 <= served[1] < (n + after) // 2 and served[0] + served[2] >= n + after - served[1]
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    attempts = db.execute("SELECT SUM(attempts) FROM calls").fetchone()[0]
    # attempts beyond one per call: the calls in flight on the dead server (<= 4), its idle keep-alive connections
    # found closed (<= 4), and the 3 refused connections that tripped its circuit — not a share of all traffic
    assert attempts - (n + after) <= 4 + 4 + 3
