"""Exit statuses of the commands that judge or generate: the truth about what got done (errors.py has the table).

A run-level error or a `--max-failed-rate` stop raises and is turned into its status by `main`; a run that
finished calls `finish` with its count of writing-level failures.
"""

from __future__ import annotations

import typer
from rich.console import Console

from howtobench.errors import EXIT_FAILURES_REMAIN

EXIT_STATUSES = (
    "Exit status: 0 every selected item was judged or generated (or built); 1 an unexpected error (a bug: please "
    "report it with its traceback); 2 the run stopped on a run-level error "
    "(one line naming the endpoint or path; nothing recorded for it; re-running resumes); 3 the run finished but "
    "writing-level failures remain (their count is printed); 4 stopped early by --max-failed-rate; 5 stopped at "
    "--max-cost (what finished is saved; re-running resumes)."
)


def finish(failed: int, total: int, noun: str, hint: str, console: Console | None = None) -> None:
    """Return normally (exit 0) when nothing failed; else print the count and exit with status 3."""
    if not failed:
        return
    console = console or Console(stderr=True)
    console.print(f"[yellow]{failed} of {total} {noun} failed[/] (writing-level, recorded with the raw reply); {hint}",
                  highlight=False)
    raise typer.Exit(EXIT_FAILURES_REMAIN)
