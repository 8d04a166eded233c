"""progress.py: the counters of a long loop stay readable in an 80-column terminal."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from howtobench import progress
from howtobench.progress import LineProgress, stats_progress

STATS = "written 3 · empty 0 · truncated 0 · failed 0 · tokens 284 · cost unknown"


def drawn(width: int) -> str:
    bar = stats_progress(True)
    task = bar.add_task("generate · my-model", total=24, stats=STATS)
    bar.update(task, completed=10)
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(bar.make_tasks_table(bar.tasks))
    return console.export_text()


def test_counters_wrap_instead_of_being_cut_at_eighty_columns() -> None:
    """It drew "generate · m… written 3 · … · tokens 284 · cost…": a fixed 40-character bar took the room."""
    text = drawn(80)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert "generate · my-model" in text and "10/24" in text
    assert " ".join(text.split()).count("cost unknown") == 1 and "truncated 0" in " ".join(text.split())


def test_a_wide_terminal_keeps_one_line() -> None:
    assert len(drawn(200).strip().splitlines()) == 1


def test_without_a_terminal_a_line_every_few_seconds_on_stderr(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Without a terminal (a log file, CI) the live bar drew nothing until the loop ended: a long run looked stuck."""
    clock = iter([0.0, 1.0, 6.0, 7.0, 20.0])
    monkeypatch.setattr(progress, "clock", lambda: next(clock))
    bar = stats_progress(True)
    assert isinstance(bar, LineProgress)  # pytest's stderr is no terminal
    with bar:
        task = bar.add_task("judge · tow", total=4, stats="failed 0")
        for k in range(4):  # at 0 s (first), 1 s (too soon), 6 s (5 s later), 7 s (the last item: always)
            bar.update(task, advance=1, stats=f"failed {k}")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" · ")[:3] for line in lines] == [
        ["judge", "tow: 1/4 (25%)", "failed 0"], ["judge", "tow: 3/4 (75%)", "failed 2"],
        ["judge", "tow: 4/4 (100%)", "failed 3"]]
    assert all(re.search(r" · \d+:\d\d:\d\d elapsed", line) for line in lines)
