"""`howtobench llm ...`: what the model calls cost (`usage`) and the embedded local model (`serve-local`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import command_group
from howtobench.config import resolve_workspace
from howtobench.event_loop import run as run_async
from howtobench.llm.accounting import StopRow, UsageRow, stops_from_log, usage_from_log
from howtobench.llm.pricing import MODES, Mode, modes_from_log
from howtobench.report.tables import Block, Document, Table, show

from .options import FormatOpt, PricesOpt, WorkspaceOpt

llm_app = command_group("llm", "The model-call layer: usage and cost from the call log, and the embedded local model.")


def register(app: typer.Typer) -> None:
    """Attach the `llm` sub-commands to the main app."""
    app.add_typer(llm_app, name="llm")


@llm_app.command("usage")
def usage_cmd(
    workspace: WorkspaceOpt = None,
    run: Annotated[str | None, typer.Option("--run", help="Only this run id (default: every run).")] = None,
    fmt: FormatOpt = "table",
    prices: PricesOpt = None,
) -> None:
    """Calls, cache hits, failures, retries, tokens and cost per run and purpose, from the workspace's call log, then
    the run-level errors that stopped runs (a wrong key, nothing answering, a replay miss...).

    "failed" counts writing-level failures (recorded on their row); "stopped" counts calls that raised a run-level
    error. A model without a price (in the built-in table or --prices) shows its cost as unknown, never $0."""
    rows = usage_from_log(resolve_workspace(workspace), run, prices)
    modes = modes_from_log(resolve_workspace(workspace), run, prices)
    stops = stops_from_log(resolve_workspace(workspace), run)
    tables: list[Block] = [_usage_table(rows), _modes_table(rows, modes), *([_stops_table(stops)] if stops else [])]
    record = [_row_dict(r, modes.get((r.run_id, r.purpose), {}), stops) for r in rows]
    show(Document(tables, data=record), fmt, Console())  # JSON: one record per run and purpose


def _row_dict(row: UsageRow, modes: dict[Mode, float | None], stops: list[StopRow]) -> dict[str, object]:
    errors = [{"model": s.model, "error": s.error, "count": s.count, "first": s.first} for s in stops
              if (s.run_id, s.purpose) == (row.run_id, row.purpose)]
    return {"run_id": row.run_id, "purpose": row.purpose, "failed": row.failed, "retries": row.retries,
            "stopped": row.stopped, **row.usage.model_dump(), "cost_by_mode": modes, "run_level_errors": errors}


def _usage_table(rows: list[UsageRow]) -> Table:
    table = Table("Model calls per run and purpose", ["run", "purpose", "calls", "from cache", "failed", "stopped",
                                                      "retries", "prompt tok", "cached tok", "completion tok",
                                                      "cost USD"])
    for r in rows:
        u = r.usage
        table.add_row(r.run_id, r.purpose, u.calls, u.cached_calls, r.failed, r.stopped, r.retries, u.prompt_tokens,
                      u.cached_tokens, u.completion_tokens, u.cost_text().lstrip("$"))
    table.notes.append("failed: writing-level (recorded on the row); stopped: a run-level error stopped the run "
                       "there (listed below).")
    return table


def _stops_table(stops: list[StopRow]) -> Table:
    table = Table("Run-level errors (the run stopped; nothing was recorded for the writing)",
                  ["run", "first seen", "purpose", "model", "calls", "error"])
    for s in stops:
        table.add_row(s.run_id, s.first, s.purpose, s.model, s.count, s.error)
    return table


def _modes_table(rows: list[UsageRow], modes: dict[tuple[str, str], dict[Mode, float | None]]) -> Table:
    table = Table("The same tokens in each pricing mode (USD)", ["run", "purpose", *MODES], digits=4)
    for r in rows:
        m = modes.get((r.run_id, r.purpose), {})
        table.add_row(r.run_id, r.purpose, *(m.get(mode) for mode in MODES))
    table.notes.append("list: no prompt cache; cached: with the cache hits the server reported; batch: at the batch "
                       "API's rate (- : unknown: the model has no batch rate, or no price at all; --prices FILE).")
    return table


PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="Loopback port to listen on, so the URL "
                    "stays the same between starts (0: any free port, printed).")]


@llm_app.command("serve-local")
def serve_local_cmd(port: PortOpt = 0) -> None:
    """Start the embedded local model (Gemma-3-270M via llama.cpp) and print its URL until Ctrl-C.

    Point any OpenAI-compatible tool at the printed base URL (model name gemma-3-270m-local). A 270M base model is
    for offline smoke runs only: its scores mean nothing.
    """
    from howtobench.llm.local import serve_until_interrupted

    run_async(serve_until_interrupted(Console(stderr=True), port))
