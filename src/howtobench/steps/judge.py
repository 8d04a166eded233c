"""Judge the benchmark (or a user's writings file) with any registered method: what `howtobench judge` runs.

Selects the (item, writing) pairs by task / genre / model / limit, gets the judge's client from the step layer
(`steps.client.step_client`: the configured endpoint live or through its batch API, the embedded local model when
none is configured, no model at all for the overlap metrics), builds the judge from the method registry
(`judges.base`) and hands everything to the resumable `run_judge`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items, load_release_writings, load_writings_file, select_items
from howtobench.data.models import Item, Writing
from howtobench.data.reference_source import load_reference_source, swap_references
from howtobench.errors import JudgeError
from howtobench.guard.guard import Guard, GuardSettings, guarded
from howtobench.judges.base import Judge, Judgment, build_judge, calls_a_model, method_info
from howtobench.judges.panel import PanelMember, PanelSpec, build_panel
from howtobench.judges.runner import read_judgments, run_judge
from howtobench.locks import output_lock
from howtobench.outputs import output_file
from howtobench.steps.client import panel_clients, step_client
from howtobench.steps.job_identity import JobIdentity, pairs_digest
from howtobench.steps.settings import Execution, Selection
from howtobench.steps.shards import Shard, write_sidecar


@dataclass(frozen=True)
class JudgeJob:
    """Everything one `howtobench judge` run needs (no secrets: the endpoint names its key variable only).

    `selection`: the items and writings judged; `execution`: how the judge's calls are answered (its `parallel` is
    the writings judged at once; None: twice the judge endpoint's capacity)."""

    selection: Selection
    execution: Execution
    out_path: Path
    method: str = "tow"
    endpoint: EndpointConfig | None = None
    options: dict[str, Any] = field(default_factory=dict)
    redo_failed: bool = False
    shard: Shard | None = None  # judge only this shard's items (steps/shards.py)
    panel: PanelSpec | None = None  # judge with every judge of the panel and combine (judges/panel.py)
    reference_from: str | None = None  # a shipped model or a writings file as the reference (Appendix B.3)
    guard: GuardSettings = field(default_factory=GuardSettings)  # --guard flag|skip (guard/); off by default

    def member(self, member: PanelMember) -> JudgeJob:
        """This job for one judge of its panel (the same output, selection and options, the judge's endpoint)."""
        return replace(self, endpoint=member.endpoint, panel=None)

    @property
    def judge_endpoints(self) -> dict[str, EndpointConfig | None]:
        """The endpoints this job calls, by lane name: "judge", or "judge <name>" per judge of a panel."""
        if self.panel is None:
            return {"judge": self.endpoint}
        return {f"judge {m.name}": m.endpoint for m in self.panel.judges}


def pairs_to_judge(job: JudgeJob) -> list[tuple[Item, Writing]]:
    """The (item, writing) pairs to judge (those of `job.shard`'s items with a shard), in item order then writing
    order."""
    return shard_pairs(job, pairs_of_selection(job))


def shard_pairs(job: JudgeJob, pairs: list[tuple[Item, Writing]]) -> list[tuple[Item, Writing]]:
    """Of the selection's `pairs`, those of `job.shard`'s items (all of them without a shard)."""
    return pairs if job.shard is None else job.shard.pick(pairs, lambda pair: pair[0].id)


def pairs_of_selection(job: JudgeJob) -> list[tuple[Item, Writing]]:
    """The (item, writing) pairs of the whole selection, in item order then writing order.

    A writing row that is bad in itself, or names no benchmark item, is skipped and counted with its file:line
    (`strict`: stops at the first); a row of an item or model the filters left out is simply not selected.
    """
    sel = job.selection
    task_items = load_items(sel.data_dir, sel.tasks)
    items = select_items(task_items, sel.tasks, sel.genres, sel.limit, sel.ids, subset=sel.subset, seed=sel.seed)
    by_id = {it.id: it for it in items}
    if sel.writings:
        every_item = load_items(sel.data_dir)  # a writing of another task is outside the selection, not bad
        writings = [w for path in sel.writings
                    for w in load_writings_file(path, every_item, strict=sel.strict, selected=by_id)]
    else:
        writings = load_release_writings(sel.data_dir, sorted({it.task for it in items}), sel.models,
                                         strict=sel.strict, items=task_items, selected=by_id)
    wanted = set(sel.models) if sel.models else None
    order = {it.id: k for k, it in enumerate(items)}
    chosen = [w for w in writings if w.item_id in by_id and (wanted is None or w.model in wanted)]
    stored = stored_tow_pairs(job)
    if stored is not None:
        chosen = [w for w in chosen if (w.item_id, w.model) in stored]
    chosen.sort(key=lambda w: order[w.item_id])
    pairs = [(by_id[w.item_id], w) for w in chosen]
    if job.reference_from is None:
        return pairs
    swap = load_reference_source(job.reference_from, sel.data_dir, task_items)
    kept, counts = swap_references(pairs, swap)
    if job.execution.report is not None:
        job.execution.report(counts.line(swap.source))
    return kept


def stored_tow_pairs(job: JudgeJob) -> set[tuple[str, str]] | None:
    """For a method that re-aggregates stored judgments (`--method average`): the (item, model) pairs of the
    `--from` file, which bound the selection.

    A writing the stored run never judged is outside the selection rather than a failure (a whole-release default
    would otherwise "fail" every writing the file lacks). None for every other method.
    """
    source, rejudges = job.options.get("tow_results"), method_info(job.method).rejudges
    if rejudges is None or source is None:
        return None
    path = Path(source)
    if not path.is_file():
        raise JudgeError(f"{path}: no such file (--from names the ToW judgments to re-aggregate)")
    pairs = {(j.item_id, j.model) for j in read_judgments(path).values() if j.method == rejudges}
    if not pairs:
        raise JudgeError(f"no ToW judgments in {path}: run `howtobench judge --method tow` first")
    return pairs


def shard_settings(job: JudgeJob, every: Sequence[tuple[Item, Writing]]) -> dict[str, Any]:
    """What must be equal between the parts of a sharded judge job (`merge` checks it), and what a batch-files
    job asks (`job_identity`): the data by the digest of the whole selection's content (`every`), never a path."""
    sel = job.selection
    judges = ({m.name: m.endpoint.model for m in job.panel.judges} if job.panel is not None else
              job.endpoint.model if job.endpoint else "local")
    return {"method": job.method, "judge_model": judges,
            "options": {k: str(v) for k, v in sorted(job.options.items())}, "data": pairs_digest(every),
            "tasks": sel.tasks, "genres": sel.genres, "models": sel.models, "limit": sel.limit, "subset": sel.subset,
            "ids": sel.ids, "seed": sel.seed, "reference_from": job.reference_from}


def with_identity(job: JudgeJob, settings: dict[str, Any]) -> JudgeJob:
    """The job with its batch files (if any) keyed by what it asks: its settings and shard."""
    files = job.execution.files
    if files is None:
        return job
    identity = JobIdentity.of({**settings, "shard": str(job.shard) if job.shard else None})
    return replace(job, execution=replace(job.execution, files=files.of(identity)))


def judge_run_id(job: JudgeJob) -> str:
    """The call log's run id of a judge command: named by its output, so `llm usage` says which command made
    the calls and a resumed command adds to the same row (a timestamp id told the user nothing)."""
    return f"judge:{job.out_path}"


async def judge_job(job: JudgeJob) -> list[Judgment]:
    """Judge every selected pair not yet in `job.out_path`; returns all their judgments."""
    with output_lock(output_file(job.out_path)):  # before the file is read back: one process per output
        every = pairs_of_selection(job)
        pairs = shard_pairs(job, every)
        settings = shard_settings(job, every)
        if job.shard is not None:
            write_sidecar(job.out_path, job.shard, "judgments", settings, [i.id for i, _ in every],
                          [(i.id, w.model) for i, w in pairs])
        job = with_identity(job, settings)
        if not pairs:
            raise JudgeError("nothing to judge: no writing matches the filters" + (
                f" among the ToW judgments of {job.options['tow_results']} (judgments of your own writings "
                "also need their file: --writings)" if stored_tow_pairs(job) is not None else ""))
        async with open_job_judge(job, len(pairs)) as (judge, in_flight):
            return await run_judge(guarded(judge, Guard(job.guard)), pairs, job.out_path, concurrency=in_flight,
                                   progress=job.execution.progress,
                                   redo_failed=job.redo_failed, max_failed_rate=job.execution.max_failed_rate)


@asynccontextmanager
async def open_job_judge(job: JudgeJob, items: int) -> AsyncIterator[tuple[Judge, int]]:
    """The job's judge on its step client and the writings in flight; for a panel a `PanelJudge` of every judge's,
    each on its own step client (its own preflight), as many writings in flight as the narrowest judge takes."""
    if job.panel is None:
        async with step_client(job.endpoint, job.execution, purpose="judge", run_id=judge_run_id(job),
                               items=items, calls_model=calls_a_model(job.method)) as step:
            yield build_judge(job.method, step.client, job.options), step.in_flight
        return
    async with open_panel_judge(job.panel, job.method, job.options, job.execution, run_id=judge_run_id(job),
                                items=items) as found:
        yield found


@asynccontextmanager
async def open_panel_judge(panel: PanelSpec, method: str, options: dict[str, Any], execution: Execution, *,
                           run_id: str, items: int, check: bool = True) -> AsyncIterator[tuple[Judge, int]]:
    """A `PanelJudge` of one `method` judge per panel member, each on its own step client (`check`: its own
    preflight), and the writings in flight: as many as the narrowest judge takes. Shared by `judge` and `run`."""
    async with panel_clients(panel, execution, run_id=run_id, items=items, calls_model=calls_a_model(method),
                             check=check) as steps:
        yield (build_panel(panel, method, {name: step.client for name, step in steps.items()}, options),
               min(step.in_flight for step in steps.values()))
