"""Option types shared by every command, so the same flag means the same thing everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

DataOpt = Annotated[
    Optional[Path],
    typer.Option("--data", help="Benchmark root (holds completion/, guide/, open/). Default: $HOWTOBENCH_DATA, else the per-user cache filled by `howtobench data download`."),
]
WorkspaceOpt = Annotated[
    Optional[Path],
    typer.Option("--workspace", help="Folder for the call cache (SQLite) and logs. Default: $HOWTOBENCH_WORKSPACE, else ./.howtobench."),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", help="YAML file of option defaults (e.g. judge_model: gpt-4o). Flags override it."),
]
StrictOpt = Annotated[
    bool,
    typer.Option("--strict", help="Stop at the first bad input row instead of skipping and counting bad rows."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of a table.")]
TaskOpt = Annotated[
    Optional[list[str]],
    typer.Option("--task", help="Only these tasks (completion, guide, open); repeatable."),
]
GenreOpt = Annotated[
    Optional[list[str]],
    typer.Option("--genre", help="Only these genres (English ids such as fiction, letters); repeatable."),
]
LimitOpt = Annotated[
    Optional[int],
    typer.Option("--limit", min=1, help="At most this many items per task (the first ones, in file order)."),
]
TABLE_FORMATS: tuple[str, ...] = ("rich", "markdown", "csv", "json")


def _check_format(value: str) -> str:
    if value not in TABLE_FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(TABLE_FORMATS)}")
    return value


FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        callback=_check_format,
        help="How tables are printed: rich (terminal table), markdown, csv or json (raw numbers, for scripts).",
    ),
]
