"""`howtobench merge`: join the parts of a sharded judge or generate job (`--shard I/N`) into one output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.steps.shards import merge_outputs

from .status import EXIT_STATUSES

PartsArg = Annotated[list[Path], typer.Argument(help="The N outputs of the parts (each with its <out>.shard.json).")]
MergedOpt = Annotated[Path, typer.Option("-o", "--out", help="The merged output: the same format as an unsharded "
                                         "job's, read by every command (leaderboard, report, judge --from, ...).")]


def merge(parts: PartsArg, out: MergedOpt) -> None:
    """Join the parts of one sharded job: checks they are of the same job (same settings and items), that every
    shard is there once, that no row is in two parts and no part lacks a row of its shard; then writes their rows,
    unchanged, in the unsharded job's order."""
    kind, count = merge_outputs(parts, out)
    Console(stderr=True).print(f"merged {len(parts)} parts: {count:,} {kind} → {out}", highlight=False,
                               soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("merge", epilog=EXIT_STATUSES)(merge)
