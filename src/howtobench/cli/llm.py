"""`howtobench llm ...`: what the model calls cost (`usage`) and the embedded local model (`serve-local`)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from howtobench.config import resolve_workspace
from howtobench.llm.accounting import UsageRow, usage_from_log

from .options import JsonOpt, WorkspaceOpt

llm_app = typer.Typer(
    name="llm",
    help="The model-call layer: usage and cost from the call log, and the embedded local model.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Attach the `llm` sub-commands to the main app."""
    app.add_typer(llm_app, name="llm")


@llm_app.command("usage")
def usage_cmd(
    workspace: WorkspaceOpt = None,
    run: Annotated[str | None, typer.Option("--run", help="Only this run id (default: every run).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Calls, cache hits, failures, retries, tokens and cost per run and purpose, from the workspace's call log."""
    rows = usage_from_log(resolve_workspace(workspace), run)
    if json_out:
        typer.echo(json.dumps([_row_dict(r) for r in rows], indent=2))
        return
    Console().print(_usage_table(rows))


def _row_dict(row: UsageRow) -> dict[str, object]:
    return {"run_id": row.run_id, "purpose": row.purpose, "failed": row.failed, "retries": row.retries,
            **row.usage.model_dump()}


def _usage_table(rows: list[UsageRow]) -> Table:
    table = Table(title="Model calls per run and purpose", title_justify="left")
    for name in ("run", "purpose"):
        table.add_column(name, no_wrap=True)
    for name in ("calls", "from cache", "failed", "retries", "prompt tok", "cached tok", "completion tok", "cost USD"):
        table.add_column(name, justify="right")
    for r in rows:
        u = r.usage
        table.add_row(r.run_id, r.purpose, f"{u.calls:,}", f"{u.cached_calls:,}", f"{r.failed:,}", f"{r.retries:,}",
                      f"{u.prompt_tokens:,}", f"{u.cached_tokens:,}", f"{u.completion_tokens:,}", f"{u.cost_usd:.4f}")
    return table


@llm_app.command("serve-local")
def serve_local_cmd() -> None:
    """Start the embedded local model (Gemma-3-270M via llama.cpp) and print its URL until Ctrl-C.

    Point any OpenAI-compatible tool at the printed base URL. A 270M base model is for offline smoke
    runs only: its scores mean nothing.
    """
    from howtobench.llm.local import serve_until_interrupted

    asyncio.run(serve_until_interrupted(Console(stderr=True)))
