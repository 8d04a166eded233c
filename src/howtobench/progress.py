"""The progress bar of the long model-calling loops (generation, judging), so both look and read the same."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

LINE_EVERY_S = 5.0
"""Seconds between two progress lines when stderr is not a terminal."""
clock = time.monotonic  # when the last progress line was printed (tests set it)
_NO_ETA: ContextVar[bool] = ContextVar("no_eta", default=False)


@contextmanager
def without_eta() -> Iterator[None]:
    """Bars made inside the block show no time left. On batch files an item either finishes at once (its answers
    were imported) or stops deferred and never counts, so the rate of finished items says nothing of the rest: an
    export showed ~2:41:42 left for a 3-minute job."""
    token = _NO_ETA.set(True)
    try:
        yield
    finally:
        _NO_ETA.reset(token)


class LineProgress(Progress):
    """The progress of a loop as a line on stderr every `LINE_EVERY_S` seconds and at the end, for a log or a CI job:
    without a terminal rich's live bar draws nothing until the loop ends, so a long run looked stuck."""

    def __init__(self, *columns: Any, eta: bool = True, **options: Any) -> None:
        super().__init__(*columns, **{**options, "disable": True})
        self._last = -math.inf
        self._eta = eta

    def update(self, task_id: TaskID, **changes: Any) -> None:
        super().update(task_id, **changes)
        self._line(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._line(task_id)

    def _line(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        done = task.total is not None and task.completed >= task.total
        now = clock()
        if done or now - self._last >= LINE_EVERY_S:
            self._last = now
            # wrapped between words at the width of the log (80 columns, or $COLUMNS), like every other line
            Console(stderr=True, highlight=False).print(progress_line(task, eta=self._eta), markup=False)


def progress_line(task: Task, *, eta: bool = True) -> str:
    """"judge · tow: 120/1,302 (9%) · failed 0 · tokens 3,456 · 0:01:20 elapsed, ~0:14:40 left"."""
    total = f"/{task.total:,.0f} ({task.percentage:.0f}%)" if task.total else ""
    stats = task.fields.get("stats") or ""
    remaining = task.time_remaining if eta else None
    left = f", ~{timedelta(seconds=round(remaining))} left" if remaining is not None else ""
    clock = f"{timedelta(seconds=round(task.elapsed or 0))} elapsed{left}"
    return " · ".join(part for part in (f"{task.description}: {task.completed:,.0f}{total}", stats, clock) if part)


def stats_progress(enabled: bool) -> Progress:
    """A bar with done/total, elapsed and remaining time, and a `stats` field the loop updates as it goes; without a
    terminal on stderr, a line every few seconds instead (`LineProgress`).

    Add its task with `bar.add_task(description, total=n, stats="")`; `enabled=False` draws nothing. Inside
    `without_eta()` there is no time left.
    """
    eta = not _NO_ETA.get()
    left = [TimeRemainingColumn(table_column=Column(no_wrap=True))] if eta else []
    if enabled and not Console(stderr=True).is_terminal:
        return LineProgress(*_columns(left), eta=eta, disable=False)
    return Progress(*_columns(left), disable=not enabled)


def _columns(left: list[Any]) -> list[Any]:
    return [
        TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True)),
        # a short bar, and counters that wrap rather than being cut: at 80 columns the default 40-character bar
        # left "… tokens 284 · cost…"
        BarColumn(bar_width=12),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        TextColumn("{task.fields[stats]}", table_column=Column(no_wrap=False, overflow="fold")),
        TimeElapsedColumn(table_column=Column(no_wrap=True)),
        *left,
    ]


@contextmanager
def step(message: str, enabled: bool = True) -> Iterator[None]:
    """A spinner with `message` on stderr while a step without countable units runs (bootstrap, report)."""
    if not enabled:
        yield
        return
    with Console(stderr=True).status(message):
        yield
