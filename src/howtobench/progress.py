"""The progress bar of the long model-calling loops (generation, judging), so both look and read the same."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column, Table
from rich.text import Text

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
            # at the width of the log (80 columns, or $COLUMNS), broken between fields as the bar's stats are
            Console(stderr=True, highlight=False).print(Fields(progress_line(task, eta=self._eta)))


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
        return LineProgress(*stats_columns(left), eta=eta, disable=False)
    return StatsProgress(*stats_columns(left), disable=not enabled)


def stats_columns(left: list[Any]) -> list[Any]:
    """The bar's columns: label, bar, done/total, stats, elapsed, then `left` (the time left, or nothing)."""
    return [
        TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True)),
        # a short bar, and counters that wrap rather than being cut: at 80 columns the default 40-character bar
        # left "… tokens 284 · cost…"
        BarColumn(bar_width=12),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        StatsColumn(table_column=Column(no_wrap=False, overflow="fold")),
        TimeElapsedColumn(table_column=Column(no_wrap=True)),
        *left,
    ]


SEPARATOR = " · "


class Fields:
    """The stats line ("calls 12 (cached 0) · tokens 3,456 · ...") broken only between its fields: at 80 columns
    rich wrapped it between words, so a field was cut in two ("cost" / "$12.3456", "calls" / "at once ...")."""

    def __init__(self, text: str) -> None:
        self.fields = [f for f in text.split(SEPARATOR) if f]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((len(f) + len(SEPARATOR.rstrip()) for f in self.fields), default=0)
        return Measurement(widest, len(SEPARATOR.join(self.fields))).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines(options.max_width):
            yield from Text(line).wrap(console, options.max_width, overflow="fold")  # a field wider than all

    def lines(self, width: int) -> list[str]:
        """The fields packed greedily into lines of at most `width` columns, each line but the last ending " ·"."""
        lines: list[str] = []
        current = ""
        for k, field in enumerate(self.fields):
            tail = "" if k == len(self.fields) - 1 else SEPARATOR.rstrip()
            joined = f"{current}{SEPARATOR}{field}" if current else field
            if current and len(joined + tail) > width:
                lines.append(current + SEPARATOR.rstrip())
                joined = field
            current = joined
        return [*lines, current] if current else lines


class StatsColumn(ProgressColumn):
    """The task's `stats` field as `Fields`."""

    def render(self, task: Task) -> Fields:
        return Fields(task.fields.get("stats") or "")


class StatsProgress(Progress):
    """A bar whose stats go on the lines below it, broken between fields, when the row does not fit the terminal:
    at 80 columns the judge's stats were squeezed into ~30 columns beside the bar and wrapped mid-field."""

    def get_renderables(self) -> Iterable[RenderableType]:
        # rich draws once from Progress.__init__, before its console exists (and before any task)
        yield self.drawn(self.console.width) if hasattr(self, "live") else self.make_tasks_table(self.tasks)

    def drawn(self, width: int) -> RenderableType:
        """One row per task when it fits in `width` columns; else the bar's row, then its stats indented below."""
        table = self.make_tasks_table(self.tasks)
        wide = self.console.options.update_width(10_000)  # the row's natural width (measuring at `width` clamps it)
        if Measurement.get(self.console, wide, table).maximum <= width:
            return table
        fixed = [c for c in self.columns if isinstance(c, ProgressColumn) and not isinstance(c, StatsColumn)]
        parts: list[RenderableType] = []
        for task in (t for t in self.tasks if t.visible):
            row = Table.grid(*(c.get_table_column().copy() for c in fixed), padding=(0, 1))
            row.add_row(*(c(task) for c in fixed))
            parts += [row, Padding(Fields(task.fields.get("stats") or ""), (0, 0, 0, 2))]
        return Group(*parts)


@contextmanager
def step(message: str, enabled: bool = True) -> Iterator[None]:
    """A spinner with `message` on stderr while a step without countable units runs (bootstrap, report)."""
    if not enabled:
        yield
        return
    with Console(stderr=True).status(message):
        yield
