"""The one resumable runner loop (runloop.py): bounded, recorded as finished, stopped cleanly."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from fake_clients import FakeClient, reply
from howtobench import runloop as loop
from howtobench.data.models import Item
from howtobench.errors import CacheMiss, DataError, OutputError, TooManyFailures
from howtobench.generate import generate_writings
from howtobench.runloop import DurableLines, LoopSettings, run_loop


class _ListSink:
    """Records results in a list; a negative number is a failed item."""

    def __init__(self) -> None:
        self.recorded: list[int] = []

    def record(self, result: int) -> bool:
        self.recorded.append(result)
        return result < 0

    def stats(self) -> str:
        return f"recorded {len(self.recorded)}"


def _settings(concurrency: int, max_failed_rate: float | None = None) -> LoopSettings:
    return LoopSettings("test", concurrency, progress=False, max_failed_rate=max_failed_rate)


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the loop never got there")


async def test_bounded_and_recorded_in_the_order_they_finish() -> None:
    release = {n: asyncio.Event() for n in (1, 2, 3, 4)}
    started: list[int] = []

    async def work(n: int) -> int:
        started.append(n)
        await release[n].wait()
        return n

    sink = _ListSink()
    running = asyncio.ensure_future(run_loop([1, 2, 3, 4], work, sink, _settings(concurrency=2)))
    await _until(lambda: started == [1, 2])
    for n, then_started in ((2, [1, 2, 3]), (1, [1, 2, 3, 4]), (4, [1, 2, 3, 4])):
        release[n].set()
        await _until(lambda: sink.recorded[-1:] == [n])  # noqa: B023 (awaited before n changes)
        assert started == then_started  # a freed place goes to the next item, never more than two at once
    release[3].set()
    await running
    assert sink.recorded == [2, 1, 4, 3]


async def test_concurrency_below_one_is_refused() -> None:
    async def work(n: int) -> int:
        return n

    with pytest.raises(DataError, match="concurrency must be at least 1"):
        await run_loop([1], work, _ListSink(), _settings(concurrency=0))


async def test_failed_share_stops_after_recording_the_failure() -> None:
    async def work(n: int) -> int:
        return n

    sink = _ListSink()
    with pytest.raises(TooManyFailures, match="2 of the 3 items finished so far failed"):
        await run_loop([1, -2, -3, 4, 5, 6, 7, 8, 9, 10], work, sink, _settings(concurrency=1, max_failed_rate=0.1))
    assert sink.recorded == [1, -2, -3]  # 1 of at least 10 is within 0.1; the second failure is past it


async def test_a_run_level_error_cancels_the_items_in_flight_and_records_none_of_them() -> None:
    cancelled: list[int] = []

    async def work(n: int) -> int:
        if n == 2:
            await asyncio.sleep(0.01)
            raise CacheMiss("replay mode: not cached")
        if n == 1:
            return n
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(n)
            raise
        return n

    sink = _ListSink()
    with pytest.raises(CacheMiss):
        await run_loop([1, 2, 3, 4], work, sink, _settings(concurrency=8))
    assert sink.recorded == [1]
    assert sorted(cancelled) == [3, 4]


def test_durable_lines_sync_on_close_and_at_most_every_interval(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    syncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(loop, "FSYNC_EVERY_S", 3600.0)

    def counting_fsync(fd: int) -> None:
        syncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    path = tmp_path / "out.jsonl"
    with DurableLines(path, every_s=3600.0) as out:
        out.write("a\n")
        out.write("b\n")
        assert path.read_text() == "a\nb\n"  # flushed at once, fsync waits for the interval
        assert syncs == []
    assert len(syncs) == 1  # on close
    with DurableLines(path, every_s=0.0) as out:
        out.write("c\n")
        out.write("d\n")
    assert len(syncs) == 4  # after each line with no interval, and on close


def test_durable_lines_let_the_error_on_its_way_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(CacheMiss), DurableLines(tmp_path / "out.jsonl", every_s=3600.0):
        raise CacheMiss("replay mode: not cached")  # the sync's OutputError does not replace it
    with pytest.raises(OutputError, match="the disk is full"), DurableLines(tmp_path / "o.jsonl"):
        pass


async def test_generation_is_synced_to_disk_at_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    items = [Item(infer_id=f"o{k}", task_type="open", basic_instruction="写一篇文章。") for k in range(3)]
    out = tmp_path / "w.jsonl"
    summary = await generate_writings(FakeClient(lambda request: reply("好。"), delay=0), items, out, progress=False)
    assert summary.written == 3
    assert [json.loads(line)["infer_id"] for line in out.read_text(encoding="utf-8").splitlines()] == ["o0", "o1",
                                                                                                        "o2"]
    assert synced  # the writings reach the disk, not only the page cache (generation never fsynced before)
