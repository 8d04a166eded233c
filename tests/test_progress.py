"""progress.py: the counters of a long loop stay readable in an 80-column terminal."""

from __future__ import annotations

import io

from rich.console import Console

from howtobench.progress import stats_progress

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
