"""Judge the benchmark (or a user's writings file) with any registered method: what `howtobench judge` runs.

Selects the (item, writing) pairs by task / genre / model / limit, opens the judge endpoint (the
embedded local model when none is configured, and no model at all for the overlap metrics), builds
the judge from the `JUDGES` registry and hands everything to the resumable `run_judge`.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items, load_release_writings, load_writings_file, select_items
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import JUDGES, Judge, Judgment
from howtobench.judges.runner import read_judgments, run_judge
from howtobench.llm.batch import BatchSettings
from howtobench.llm.client import CacheMode
from howtobench.llm.preflight import preflight_endpoints
from howtobench.llm.types import LLMClient
from howtobench.locks import output_lock
from howtobench.outputs import output_file
from howtobench.session import batch_client, optional_client

JUDGE_MODULES: tuple[str, ...] = (
    "howtobench.judges.tree_of_writing",
    "howtobench.judges.overlap",
    "howtobench.judges.baselines",
)
NO_MODEL_METHODS: frozenset[str] = frozenset({"bleu", "rouge", "sacrebleu", "average"})


@dataclass(frozen=True)
class JudgeJob:
    """Everything one `howtobench judge` run needs (no secrets: the endpoint names its key variable only)."""

    data_dir: Path
    out_path: Path
    workspace: Path
    method: str = "tow"
    tasks: tuple[str, ...] | None = None
    genres: tuple[str, ...] | None = None
    models: tuple[str, ...] | None = None
    limit: int | None = None
    subset: int | None = None
    ids: tuple[str, ...] | None = None
    seed: int = 0
    writings: tuple[Path, ...] = ()
    endpoint: EndpointConfig | None = None
    cache_mode: CacheMode = "on"
    options: dict[str, Any] = field(default_factory=dict)
    concurrency: int | None = None  # writings judged at once; None: twice the judge endpoint's capacity
    progress: bool = True
    redo_failed: bool = False
    prices: Path | None = None  # the user's price table, over the built-in one (accounting of real calls too)
    strict: bool = False  # a bad --writings row stops the run (default: skipped and counted with file:line)
    batch: BatchSettings | None = None  # send the judge's calls through the endpoint's batch API
    report: Callable[[str], None] | None = None  # where batch status lines go
    max_failed_rate: float | None = None
    preflight: bool = False  # one tiny request to the judge endpoint before the first writing (llm/preflight.py)


DEFAULT_IN_FLIGHT = 8  # writings at once without an endpoint (the local model, or metrics that call none)
IN_FLIGHT_PER_SLOT = 2  # writings in flight per judge slot (see `writings_in_flight`)


def writings_in_flight(parallel: int | None, endpoint: EndpointConfig | None) -> int:
    """Writings judged at once: the user's --parallel, else twice as many as the judge takes calls at once.

    Why twice: a writing also spends time outside its calls (its prompt built, its cache lookup, its call-log
    row committed, its judgment written). With exactly one writing per slot a one-call method left each slot
    idle for all of that (bench/saturation.py: ~0.63 of capacity on an idle machine); with a second writing
    waiting on every slot, a freed slot goes straight to a request that is ready. ToW (several calls per
    writing) keeps the slots busy either way; the client's slots, not this number, bound the calls in flight.
    """
    if parallel is not None:
        return parallel
    return IN_FLIGHT_PER_SLOT * endpoint.capacity if endpoint is not None else DEFAULT_IN_FLIGHT


def import_judges() -> None:
    """Import the judge modules so their `register_judge` decorators fill the registry (missing ones are skipped)."""
    for module in JUDGE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def calls_a_model(method: str) -> bool:
    """True for a registered judge method that calls a model (False for overlap metrics and unknown names)."""
    import_judges()
    return method in JUDGES and method not in NO_MODEL_METHODS


def build_judge(method: str, client: LLMClient | None, options: dict[str, Any]) -> Judge:
    """A judge from the registry; an option the method does not take is a clear error, not ignored."""
    import_judges()
    if method not in JUDGES:
        raise JudgeError(f"unknown judge method {method!r}; known: {', '.join(sorted(JUDGES)) or 'none'}")
    try:
        return JUDGES[method](client=client, **options)
    except TypeError as exc:
        raise JudgeError(f"method {method!r} does not take the options {sorted(options)}: {exc}") from exc


def judge_options(*, with_reference: bool = True, renormalize: bool = False, samples: int = 1,
                  tree: Path | str | None = None, max_tokens: int | None = None,
                  tow_results: Path | None = None) -> dict[str, Any]:
    """Only the options the user changed from their defaults, so methods that do not take them are not bothered
    (`build_judge` rejects an option a method does not know). Shared by `howtobench judge` and the inspect task."""
    options: dict[str, Any] = {}
    if not with_reference:
        options["with_reference"] = False
    if renormalize:
        options["renormalize"] = True
    if samples > 1:
        options["samples"] = samples
    if tree is not None:
        options["tree"] = tree
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if tow_results is not None:
        options["tow_results"] = tow_results
    return options


def select_pairs(job: JudgeJob) -> list[tuple[Item, Writing]]:
    """The (item, writing) pairs to judge, in item order then writing order.

    A writing row that is bad in itself, or names no benchmark item, is skipped and counted with its file:line
    (`strict`: stops at the first); a row of an item or model the filters left out is simply not selected.
    """
    task_items = load_items(job.data_dir, job.tasks)
    items = select_items(task_items, job.tasks, job.genres, job.limit, job.ids, subset=job.subset, seed=job.seed)
    by_id = {it.id: it for it in items}
    if job.writings:
        every_item = load_items(job.data_dir)  # a writing of another task is outside the selection, not bad
        writings = [w for path in job.writings
                    for w in load_writings_file(path, every_item, strict=job.strict, selected=by_id)]
    else:
        writings = load_release_writings(job.data_dir, sorted({it.task for it in items}), job.models,
                                         strict=job.strict, items=task_items, selected=by_id)
    wanted = set(job.models) if job.models else None
    order = {it.id: k for k, it in enumerate(items)}
    chosen = [w for w in writings if w.item_id in by_id and (wanted is None or w.model in wanted)]
    stored = stored_tow_pairs(job)
    if stored is not None:
        chosen = [w for w in chosen if (w.item_id, w.model) in stored]
    chosen.sort(key=lambda w: order[w.item_id])
    return [(by_id[w.item_id], w) for w in chosen]


def stored_tow_pairs(job: JudgeJob) -> set[tuple[str, str]] | None:
    """For `--method average`: the (item, model) pairs of the `--from` ToW file, which bound the selection.

    Average scoring re-aggregates stored judgments, so a writing the ToW run never judged is outside the
    selection rather than a failure (a whole-release default would otherwise "fail" every writing the file lacks).
    None for every other method.
    """
    source = job.options.get("tow_results")
    if job.method != "average" or source is None:
        return None
    path = Path(source)
    if not path.is_file():
        raise JudgeError(f"{path}: no such file (--from names the ToW judgments to re-aggregate)")
    pairs = {(j.item_id, j.model) for j in read_judgments(path).values() if j.method == "tow"}
    if not pairs:
        raise JudgeError(f"no ToW judgments in {path}: run `howtobench judge --method tow` first")
    return pairs


@asynccontextmanager
async def judge_client(job: JudgeJob) -> AsyncIterator[LLMClient | None]:
    """The judge model's client: the configured endpoint (through its batch API with `job.batch`), else the
    embedded local model; none for overlap metrics."""
    if job.batch is not None and job.method not in NO_MODEL_METHODS:
        async with batch_client(job.endpoint, workspace=job.workspace, settings=job.batch, cache_mode=job.cache_mode,
                                purpose="judge", report=job.report, prices=job.prices,
                                run_id=judge_run_id(job)) as batched:
            yield batched
        return
    async with optional_client(job.method not in NO_MODEL_METHODS, job.endpoint, workspace=job.workspace,
                               cache_mode=job.cache_mode, purpose="judge", prices=job.prices,
                               run_id=judge_run_id(job)) as client:
        yield client


def judge_run_id(job: JudgeJob) -> str:
    """The call log's run id of a judge command: named by its output, so `llm usage` says which command made
    the calls and a resumed command adds to the same row (a timestamp id told the user nothing)."""
    return f"judge:{job.out_path}"


async def judge_job(job: JudgeJob) -> list[Judgment]:
    """Judge every selected pair not yet in `job.out_path`; returns all their judgments."""
    with output_lock(output_file(job.out_path)):  # before the file is read back: one process per output
        pairs = select_pairs(job)
        if not pairs:
            raise JudgeError("nothing to judge: no writing matches the filters" + (
                f" among the ToW judgments of {job.options['tow_results']} (judgments of your own writings "
                "also need their file: --writings)" if stored_tow_pairs(job) is not None else ""))
        if job.batch is None and calls_a_model(job.method):  # a batch's upload is its own cheap check
            await preflight_endpoints({"judge": job.endpoint}, enabled=job.preflight, cache_mode=job.cache_mode,
                                      workspace=job.workspace, run_id=judge_run_id(job))
        async with judge_client(job) as client:
            judge = build_judge(job.method, client, job.options)
            # in batch mode every writing is in flight at once: its calls wait for their batch, not for a slot
            in_flight = (max(1, len(pairs)) if job.batch is not None
                         else writings_in_flight(job.concurrency, job.endpoint))
            return await run_judge(judge, pairs, job.out_path, concurrency=in_flight, progress=job.progress,
                                   redo_failed=job.redo_failed, max_failed_rate=job.max_failed_rate)
