"""The progress bar of the long model-calling loops (generation, judging), so both look and read the same."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column


def stats_progress(enabled: bool) -> Progress:
    """A bar with done/total, elapsed and remaining time, and a `stats` field the loop updates as it goes.

    Add its task with `bar.add_task(description, total=n, stats="")`; `enabled=False` draws nothing.
    """
    return Progress(
        TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True)),
        # a short bar, and counters that wrap rather than being cut: at 80 columns the default 40-character bar
        # left "… tokens 284 · cost…"
        BarColumn(bar_width=12),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        TextColumn("{task.fields[stats]}", table_column=Column(no_wrap=False, overflow="fold")),
        TimeElapsedColumn(table_column=Column(no_wrap=True)),
        TimeRemainingColumn(table_column=Column(no_wrap=True)),
        disable=not enabled,
    )


@contextmanager
def step(message: str, enabled: bool = True) -> Iterator[None]:
    """A spinner with `message` on stderr while a step without countable units runs (bootstrap, report)."""
    if not enabled:
        yield
        return
    with Console(stderr=True).status(message):
        yield
