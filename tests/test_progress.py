"""progress.py: the counters of a long loop stay readable in an 80-column terminal."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from howtobench import progress
from howtobench.progress import LineProgress, progress_line, stats_progress, without_eta

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


def test_on_batch_files_no_time_left_is_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: a batch-files export showed ~2:41:42 left for a 3-minute job (deferred items never count, so the
    rate of finished ones says nothing): on batch files the bar and the log line have no time left."""
    from rich.progress import TimeRemainingColumn

    from howtobench.config import EndpointConfig
    from howtobench.steps.batch_files import BatchFiles
    from howtobench.steps.client import step_client
    from howtobench.steps.settings import Execution

    def has_eta() -> bool:
        return any(isinstance(c, TimeRemainingColumn) for c in stats_progress(True).columns)

    async def inside(execution: Execution) -> bool:
        async with step_client(EndpointConfig(model="m", base_urls=("http://127.0.0.1:1/v1",)), execution,
                               purpose="judge", run_id="judge:x", items=3, check=False):
            return has_eta()

    files = BatchFiles(export=tmp_path / "calls.jsonl")
    assert asyncio.run(inside(Execution(workspace=tmp_path / "ws", files=files))) is False
    assert has_eta()  # outside the block, and on a live client, as before
    assert asyncio.run(inside(Execution(workspace=tmp_path / "ws"))) is True
    bar = stats_progress(True)
    task = bar.add_task("judge · tow", total=100, stats="")
    monkeypatch.setattr(type(bar.tasks[0]), "time_remaining", property(lambda _t: 9702.0))
    assert progress_line(bar.tasks[task]).endswith(", ~2:41:42 left")
    assert progress_line(bar.tasks[task], eta=False).endswith("elapsed")
    with without_eta():
        line_bar = stats_progress(True)
        assert isinstance(line_bar, LineProgress) and not line_bar._eta


JUDGE_STATS = ("calls 1,234 (cached 12) · tokens 3,456,789 · cost $12.3456 · failed 3 · "
               "calls at once gpt-4o-2024-11-20 64 (auto)")


@pytest.mark.parametrize("width", [80, 60])
def test_at_eighty_columns_the_judge_bar_breaks_between_fields(width: int) -> None:
    """Issue 40: at 80 columns the judge's stats were squeezed into ~30 columns beside the bar and wrapped
    mid-field ("cost" / "$12.3456", "calls at" / "once"): they now go below the bar, broken only between fields."""
    from rich.progress import TimeRemainingColumn

    bar = progress.StatsProgress(*progress.stats_columns([TimeRemainingColumn()]))
    task = bar.add_task("judge · tow", total=1302, stats=JUDGE_STATS)
    bar.update(task, completed=120)
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(bar.drawn(width))
    lines = [line.rstrip() for line in console.export_text().splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= width
    assert lines[0].startswith("judge · tow") and "120/1302" in lines[0] and "0:00:00" in lines[0]
    for field in JUDGE_STATS.split(" · "):  # each field whole on one line
        assert sum(field in line for line in lines[1:]) == 1, (field, lines)
    wide = Console(file=io.StringIO(), width=200, record=True)
    wide.print(bar.drawn(200))
    assert len(wide.export_text().strip().splitlines()) == 1  # room enough: one row, as before


def test_without_a_terminal_the_line_breaks_between_fields(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`scripts/main`'s log at 80 columns showed "... · $0.0000 · failed" / "0 · 0:01:22 elapsed": the progress line
    without a terminal wrapped between words, cutting a field in two; it now breaks only between fields."""
    monkeypatch.setenv("COLUMNS", "80")
    bar = stats_progress(True)
    assert isinstance(bar, LineProgress)
    with bar:
        task = bar.add_task("judge · tow", total=1302, stats=JUDGE_STATS)
        bar.update(task, completed=1302)  # the last item: always a line
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 1 and max(len(line) for line in lines) <= 80
    for field in JUDGE_STATS.split(" · "):  # each field whole on one line
        assert sum(field in line for line in lines) == 1, (field, lines)
    assert all(line.endswith(" ·") for line in lines[:-1]) and "elapsed" in lines[-1]
