"""The one resumable runner loop: pending items in, each finished one recorded durably as it finishes.

Every job that works through items with a model (judge, generate, perturb) reads what its output already holds,
hands the rest here, and says how one item is done and how a finished one is recorded (`Sink`). The loop:

- keeps at most `concurrency` items in flight (the client layer bounds the calls; this bounds the writings);
- records each result the moment it finishes (`Sink.record`, which appends it to the output), so a kill loses
  only the items in flight, and moves the progress bar with the sink's stats line;
- counts writing-level failures against `max_failed_rate` (`outcome.FailureBudget`: TooManyFailures once the
  failed share passes it, after the failing item is recorded);
- on any exception from an item (a run-level error: errors.py) cancels and awaits the others (`as_finished`):
  nothing is recorded for them, and the next run picks them up; a `StopAfterSiblings` (--max-cost, Ctrl-C's
  drain: `howtobench.interrupt`) lets them end by themselves first, and starts no new item.

An item that never awaits (BLEU / ROUGE are CPU-only) would run every item before the loop saw one finish, leaving
the bar at 0 until the end: each item hands the event loop back once before its work (before, not after: an item
that fails at once must not overtake one that finished before it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

from howtobench.concurrency import as_finished
from howtobench.errors import DataError, OutputError
from howtobench.interrupt import check_drain
from howtobench.llm.adaptive import levels_text
from howtobench.outcome import FailureBudget
from howtobench.outputs import AppendOnly
from howtobench.progress import stats_progress

T = TypeVar("T")
R = TypeVar("R")
R_contra = TypeVar("R_contra", contravariant=True)

FSYNC_EVERY_S = 0.5
"""A durable file is fsynced at least this often while lines arrive, and at the end."""


class Sink(Protocol[R_contra]):
    """Where a loop's finished results go."""

    def record(self, result: R_contra) -> bool:
        """Write `result` durably (before the next one is looked at); True when its item failed."""
        ...

    def stats(self) -> str:
        """The progress bar's stats line after the results recorded so far."""
        ...


@dataclass(frozen=True)
class LoopSettings:
    """How a loop runs: its bar's label, items in flight, whether the bar is drawn, the failed-share limit."""

    label: str
    concurrency: int
    progress: bool = True
    max_failed_rate: float | None = None
    noun: str = "items"  # what the items are called in the TooManyFailures message


class DurableLines:
    """An output file lines are appended to: each flushed at once (a kill -9 loses none), fsynced at least every
    `every_s` seconds and when the file is closed (a power cut loses at most that much). Write errors are
    OutputErrors naming the file (howtobench.outputs)."""

    def __init__(self, path: Path, every_s: float = FSYNC_EVERY_S) -> None:
        self.path = path
        self.every_s = every_s
        self._file = AppendOnly(path)
        self._last_sync = time.monotonic()

    def write(self, line: str) -> None:
        self._file.write(line)
        if time.monotonic() - self._last_sync >= self.every_s:
            self.sync()

    def sync(self) -> None:
        self._file.sync()
        self._last_sync = time.monotonic()

    def __enter__(self) -> DurableLines:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if exc is None:
                self.sync()
            else:
                with contextlib.suppress(OutputError):  # the error already on its way says it better
                    self.sync()
        finally:
            self._file.__exit__(kind, exc, tb)


def _stats(sink: Sink[Any]) -> str:
    """The sink's counters, and the calls let in flight where an endpoint's concurrency is auto."""
    return " · ".join(part for part in (sink.stats(), levels_text()) if part)


async def run_loop(todo: Sequence[T], work: Callable[[T], Awaitable[R]], sink: Sink[R], settings: LoopSettings) -> None:
    """Run `work` on every item of `todo`, at most `settings.concurrency` at once, each result handed to
    `sink.record` as it finishes (see the module docstring for what stops the loop and what is then written)."""
    if settings.concurrency < 1:
        raise DataError("concurrency must be at least 1")
    gate = asyncio.Semaphore(settings.concurrency)
    budget = FailureBudget(len(todo), settings.max_failed_rate, settings.noun)

    async def one(item: T) -> R:
        async with gate:
            await asyncio.sleep(0)  # the loop below records what finished and moves the bar (CPU-only work never waits)
            check_drain()  # after Ctrl-C no item starts; those started finish and are recorded (howtobench/interrupt)
            return await work(item)

    with stats_progress(settings.progress) as bar:
        task = bar.add_task(settings.label, total=len(todo), stats=_stats(sink))
        async with as_finished(one(item) for item in todo) as finished:  # started in the order of `todo`
            async for result in finished:
                failed = sink.record(result)
                bar.update(task, advance=1, stats=_stats(sink))
                budget.record(failed)
