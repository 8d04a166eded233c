"""Exit statuses of the commands that judge or generate: the truth about what got done (errors.py has the table).

A run-level error or a `--max-failed-rate` stop raises and is turned into its status by `main`; a run that
finished calls `finish` with its count of writing-level failures.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.console import Console

from howtobench.errors import EXIT_FAILURES_REMAIN

EXIT_STATUSES = (
    "Exit status: 0 every selected item was judged or generated (or built); 1 an unexpected error (a bug: please "
    "report it with its traceback); 2 the run stopped on a run-level error "
    "(one line naming the endpoint or path; nothing recorded for it; re-running resumes); 3 the run finished but "
    "writing-level failures remain (their count is printed); 4 stopped early by --max-failed-rate; 5 stopped at "
    "--max-cost (what finished is saved; re-running resumes); 130 Ctrl-C (the calls in flight were answered and "
    "recorded first; re-running resumes)."
)


def finish(failed: int, total: int, noun: str, hint: str, console: Console | None = None,
           closing: Sequence[str] = ()) -> None:
    """Print the count of writing-level failures (if any), then the `closing` lines on stdout — the answer, last, so
    it is on screen without scrolling — and return (exit 0) when nothing failed, else exit with status 3."""
    if failed:
        console = console or Console(stderr=True)
        console.print(f"[yellow]{failed} of {total} {noun} failed[/] (writing-level, recorded with the raw reply); "
                      f"{hint}", highlight=False)
    if closing:
        answer = Console()  # wrapped between words at the terminal's width, as the table above it
        for line in closing:
            answer.print(line, highlight=False, markup=False)
    if failed:
        raise typer.Exit(EXIT_FAILURES_REMAIN)
