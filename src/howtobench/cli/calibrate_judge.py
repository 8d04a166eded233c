"""The judging half of `howtobench calibrate` (in cli/: it takes the command's flags): the new judge scores the
anchors through the ordinary judge step (estimate first, resumable, cached), for a calibration onto a reference
judge or onto the paper."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from howtobench.calibration.anchor_job import (
    anchor_texts,
    of_anchors,
    paper_anchors,
    sidecar,
    write_anchor_texts,
)
from howtobench.calibration.anchors import AnchorPlan
from howtobench.cli.judge_flags import Judging
from howtobench.cli.money import Money, estimate_first
from howtobench.cli.options import ModelFlags, check_judge, preflight_plan
from howtobench.cli.params import LIVE, Control, Filters, execution
from howtobench.config import resolve_data_dir
from howtobench.data.models import Writing
from howtobench.data.paper import paper_table4
from howtobench.dry_run import plan_judges
from howtobench.event_loop import run as run_async
from howtobench.judges.base import Judgment, calls_a_model
from howtobench.llm.budget import spending_limit
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Selection
from howtobench.steps.spending import spends_money

PAPER_ANCHORS = 3000


@dataclass(frozen=True)
class Anchoring:
    """What `calibrate` was asked, as the judging half needs it."""

    out: Path
    anchors: int | None
    seed: int
    writings: tuple[Path, ...]
    local_judge: bool
    judging: Judging
    filters: Filters
    money: Money
    control: Control
    report: Callable[[str], None]


def _judge(setup: Anchoring, flags: ModelFlags, method: str, pairs: list[tuple[str, str]],
           data_dir: Path) -> list[Judgment] | None:
    """The new judge's judgments of the anchor `pairs` (None: --dry-run, or the user declined the cost)."""
    check_judge(flags.judge, method, setup.local_judge, "calibrate needs the new judge (--judge-base-url and "
                "--judge-model), or its judgments of the anchors (--new)")
    texts = anchor_texts(pairs, data_dir, setup.writings)
    if setup.control.dry_run:  # the plan reads the anchors' texts from a file; a dry run leaves none behind
        with tempfile.TemporaryDirectory() as tmp:
            _estimate(setup, flags, _anchor_job(setup, flags, method, texts, data_dir, Path(tmp) / "anchors.jsonl"))
        return None
    job = _anchor_job(setup, flags, method, texts, data_dir, sidecar(setup.out, "anchors"))
    if not _estimate(setup, flags, job):
        return None
    with spending_limit(setup.money.max_cost):
        judged = run_async(judge_job(job))
    failed = sum(j.status == "failed" for j in judged)
    setup.report(f"the new judge scored {len(judged) - failed} of {len(judged)} anchors"
                 + (f" ({failed} failed: left out of the map)" if failed else "") + f"; kept in {job.out_path}")
    return of_anchors(judged, pairs)


def _anchor_job(setup: Anchoring, flags: ModelFlags, method: str, texts: list[Writing], data_dir: Path,
                texts_path: Path) -> JudgeJob:
    """The judge job of the anchors, their texts written to `texts_path` (its writings file)."""
    write_anchor_texts(texts, texts_path)
    return JudgeJob(selection=Selection(data_dir=data_dir, writings=(texts_path,)),
                    execution=execution(flags, setup.control, LIVE, None), out_path=sidecar(setup.out, "new"),
                    method=method, endpoint=flags.judge, options=setup.judging.options(method))


def _estimate(setup: Anchoring, flags: ModelFlags, job: JudgeJob) -> bool:
    """The estimate first (`money.estimate_first`): True to go on."""
    calls = {"judge": flags.judge} if calls_a_model(job.method) else {}  # a metric calls no model
    return estimate_first("calibrate", lambda: run_async(plan_judges(job, setup.control.prices)),
                          {"judge": flags.judge.capacity if flags.judge else 1}, setup.money,
                          dry_run=setup.control.dry_run, pays=spends_money(calls, cache_mode=flags.cache_mode),
                          preflight=preflight_plan(flags, calls),
                          prices=setup.control.prices)


def new_judgments(setup: Anchoring, flags: ModelFlags, plan: AnchorPlan) -> list[Judgment] | None:
    """The new judge's judgments of the reference's anchors (the reference's method)."""
    methods = {a.method for a in plan.anchors}
    pairs = [(a.item_id, a.model) for a in plan.anchors]
    return _judge(setup, flags, next(iter(sorted(methods))), pairs, resolve_data_dir(setup.filters.data))


def paper_judgments(setup: Anchoring, flags: ModelFlags) -> list[Judgment] | None:
    """The new judge's ToW judgments of a stratified sample of the paper models' shipped writings."""
    data_dir = resolve_data_dir(setup.filters.data)
    pairs = paper_anchors(data_dir, paper_table4().models, setup.anchors or PAPER_ANCHORS, setup.seed)
    setup.report(f"{len(pairs)} shipped writings of the paper's {len(paper_table4().models)} models as anchors")
    return _judge(setup, flags, "tow", pairs, data_dir)
