"""Run one model-backed build step with a client, or plan it for a cost estimate (the CLI's one call).

`plan` lists the requests a step would send now (only pending texts, so a resumed run is priced for what is
left); the CLI prices them with the dry-run machinery (`llm/dryrun.price_plan`). `run` opens the step client — an
endpoint from flags, or the embedded local model — and runs the step through the step layer's runner loop
(`runloop.run_loop`: the bar, writings in flight from the step client, the --max-failed-rate stop); each finished
text's rows are appended to the stage file at once and calls are cached by the client layer, so a killed run
resumes from the stage file and the cache without repeating a finished call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from howtobench.config import EndpointConfig
from howtobench.construct import classify, make, quality
from howtobench.data.models import TASKS
from howtobench.errors import ConfigError
from howtobench.llm.types import ChatRequest
from howtobench.runloop import LoopSettings
from howtobench.steps.client import DEFAULT_IN_FLIGHT, StepClient, step_client
from howtobench.steps.settings import Execution

Step = Literal["classify", "filter", "make"]
CacheMode = Literal["on", "off", "replay"]


@dataclass(frozen=True)
class StepOptions:
    threshold: int = quality.DEFAULT_THRESHOLD
    tasks: tuple[str, ...] = TASKS
    seed: int = 0
    retry_failed: bool = False
    split: bool = False
    max_failed_rate: float | None = None  # stop the step past this failed share (outcome.FailureBudget)


def plan(step: Step, build_dir: Path, opts: StepOptions) -> list[ChatRequest]:
    """The requests the step would send now."""
    if step == "classify":
        return [classify.request_for(t) for t in classify.pending(build_dir, retry_failed=opts.retry_failed)]
    if step == "filter":
        return [quality.request_for(t, g) for t, g in quality.pending(build_dir, retry_failed=opts.retry_failed)]
    return make.planned_requests(build_dir, opts.tasks, retry_failed=opts.retry_failed, split=opts.split,
                                 seed=opts.seed)


def pending_count(step: Step, build_dir: Path, opts: StepOptions) -> int:
    """How many units (texts) the step has left: the length of its progress bar."""
    if step == "classify":
        return len(classify.pending(build_dir, retry_failed=opts.retry_failed))
    if step == "filter":
        return len(quality.pending(build_dir, retry_failed=opts.retry_failed))
    return len(make.pending(build_dir, opts.tasks, retry_failed=opts.retry_failed, split=opts.split, seed=opts.seed))


def needs_model(step: Step, opts: StepOptions) -> bool:
    return step != "make" or bool({"guide", "open"} & set(opts.tasks))


@contextlib.asynccontextmanager
async def client_for(endpoint: EndpointConfig | None, *, local: bool, workspace: Path, cache_mode: CacheMode,
                     prices: Path | None = None) -> AsyncIterator[StepClient]:
    """The step client on the given endpoint, or on the embedded local model when `local`."""
    if not local and endpoint is None:
        raise ConfigError("this step calls a model: pass --model and --base-url, or --local")
    execution = Execution(workspace=workspace, cache_mode=cache_mode, prices=prices)
    async with step_client(None if local else endpoint, execution, purpose="model", run_id=None, items=0,
                           check=False) as step:  # the command ran the preflight before its first step
        assert step.client is not None  # a build step that needs a model always calls one
        yield step


async def run(step: Step, build_dir: Path, opts: StepOptions, *, endpoint: EndpointConfig | None, local: bool,
              workspace: Path, cache_mode: CacheMode = "on", progress: bool = False,
              prices: Path | None = None) -> Any:
    """Run the step through the step layer's runner loop and return its report (ClassifyReport, ScoreTable or
    MakeReport); `progress` draws its bar.

    Raises TooManyFailures once the failed share of the texts finished passes `opts.max_failed_rate` (the rows
    written so far stay; a re-run resumes)."""
    def loop(in_flight: int) -> LoopSettings:
        return LoopSettings(f"build · {step}", in_flight, progress, opts.max_failed_rate, "texts")

    if not needs_model(step, opts):
        return await make.make(build_dir, None, tasks=opts.tasks, seed=opts.seed, retry_failed=opts.retry_failed,
                               split=opts.split, loop=loop(DEFAULT_IN_FLIGHT))
    async with client_for(endpoint, local=local, workspace=workspace, cache_mode=cache_mode, prices=prices) as sc:
        client, settings = sc.client, loop(sc.in_flight)
        assert client is not None
        if step == "classify":
            return await classify.classify(build_dir, client, retry_failed=opts.retry_failed, loop=settings)
        if step == "filter":
            return await quality.rate(build_dir, client, threshold=opts.threshold, retry_failed=opts.retry_failed,
                                      loop=settings)
        return await make.make(build_dir, client, tasks=opts.tasks, seed=opts.seed, retry_failed=opts.retry_failed,
                               split=opts.split, loop=settings)
