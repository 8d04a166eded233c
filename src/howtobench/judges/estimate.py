"""What a judge would call, without calling anything: its requests recorded on a `RecordingClient` and priced.

Used by every command's `--dry-run` and money-first estimate (`dry_run.py`) and by the robustness plan, so it
sits with the judges rather than in one of the jobs above them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.data.models import Item, Writing
from howtobench.errors import HowtobenchError
from howtobench.judges.base import Judge, build_judge, calls_a_model
from howtobench.judges.runner import read_judgments
from howtobench.llm.dryrun import Estimate, RecordingClient, model_name, price_plan
from howtobench.llm.expected import reply_sizes


async def record_judging(judge: Judge, pairs: Sequence[tuple[Item, Writing]], out_path: Path, *,
                         redo_failed: bool = False) -> int:
    """Run `judge` (built on a RecordingClient) over the pairs `run_judge` would judge; returns how many."""
    done = read_judgments(out_path)
    todo = list({
        (judge.method, i.id, w.model): (i, w)
        for i, w in pairs
        if (old := done.get((judge.method, i.id, w.model))) is None or (redo_failed and old.status == "failed")
    }.values())

    async def one(item: Item, writing: Writing) -> None:
        with contextlib.suppress(HowtobenchError):  # the real run records a failed judgment, no further call
            await judge.judge(item, writing)

    await asyncio.gather(*(one(i, w) for i, w in todo))
    return len(todo)


async def plan_judge_pairs(method: str, endpoint: EndpointConfig | None, options: dict[str, object],
                           pairs: Sequence[tuple[Item, Writing]], out_path: Path, *, redo_failed: bool = False,
                           prices: Path | None = None, workspace: Path | None = None) -> Estimate:
    """The judge's calls for the pairs not yet judged in `out_path`; expected replies as the judge's earlier ones in
    `workspace`'s call log, else of a typical size (`llm.expected`)."""
    model = model_name(endpoint)
    if not calls_a_model(method):
        return Estimate(role="judge", model=method, priced=True, notes=[f"{method} calls no model"])
    client = RecordingClient(model)
    judge = build_judge(method, client, dict(options))
    pending = await record_judging(judge, pairs, out_path, redo_failed=redo_failed)
    estimate = price_plan("judge", model, client.requests, prices, sizes=reply_sizes(workspace, model))
    estimate.notes.append(f"{pending} of {len(pairs)} writing(s) still to judge")
    return estimate
