"""`howtobench judge`: judge the release writings (or your own) with ToW or any registered method, resumably."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli import params
from howtobench.cli.guard_options import NO_GUARD, GuardFlags
from howtobench.cli.help_groups import GroupedCommand
from howtobench.dry_run import plan_judges
from howtobench.event_loop import run as run_async
from howtobench.judges.base import Judgment, calls_a_model, counted_score
from howtobench.llm.budget import spending_limit
from howtobench.progress import step
from howtobench.report.headline import headlines
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.spending import spends_money

from .judge_flags import AS_JUDGED, Judging
from .judge_panel import PanelOpt, panel_spec
from .money import Money, estimate_first
from .options import (
    LocalJudgeOpt,
    ParallelOpt,
    ReferenceFromOpt,
    ShardOpt,
    batch_rounds,
    check_judge,
    check_method,
    model_flags,
    preflight_plan,
    shard_of,
)
from .status import EXIT_STATUSES, finish

console = Console(stderr=True)

MethodOpt = Annotated[str, typer.Option(
    "--method", callback=check_method,
    help="Judge method from the registry (`howtobench list methods`): tow (Tree-of-Writing); bleu (authors' BLEU-1, "
    "0-100), rouge (ROUGE-L F1 as rouge-chinese, 0-1), sacrebleu (standard sentence BLEU-4, 0-100); or an LLM "
    "baseline: single, autoplan, rubric; or average (needs --from).")]
OutOpt = Annotated[Path | None, typer.Option("-o", "--out", help="Output JSONL, one judgment per (method, item, "
                                             "model); default judgments/<method>.jsonl. Re-running with the same "
                                             "file resumes: finished judgments are skipped.")]
WritingsOpt = Annotated[list[Path] | None, typer.Option("--writings", help="Judge the writings in this JSONL file "
                        "(infer_id, model, output per line) instead of the release's; repeatable. Bad rows are "
                        "skipped and counted with file:line (--strict stops at the first); rows of items or models "
                        "outside --task/--genre/--limit/--models are left out without a warning.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of --subset (same seed, same items).")]
RedoFailedOpt = Annotated[bool, typer.Option("--redo-failed", help="Judge again the writings whose judgment in --out "
                          "has status 'failed' (the new line supersedes the old one).")]


def _summary(judgments: list[Judgment], out: Path) -> None:
    statuses = Counter(j.status for j in judgments)
    scores = [v for j in judgments if (v := counted_score(j)) is not None]
    mean = f"{sum(scores) / len(scores):.3f}" if scores else "n/a"
    parts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    left_out = " (empty writings left out, as the leaderboard does)" if statuses.get("empty") else ""
    console.print(f"{len(judgments)} judgments ({parts}); mean score {mean}{left_out}; written to {out}",
                  highlight=False)


@params.flags(params.JUDGE_ENDPOINT, after="prompt_language")
@params.bundled("judging", Judging)
@params.flags(params.CALL_FILES, after="parallel")
@params.bundled("money", Money, params.MONEY_FLAGS)
@params.bundled("batching", params.Batching, params.BATCH_FLAGS)
@params.bundled("filters", params.Filters, params.WRITING_FILTERS)
@params.bundled("control", params.Control, params.STOP_FIRST_CONTROL)
@params.bundled("guard", GuardFlags)
def judge(
    out: OutOpt = None,
    method: MethodOpt = "tow",
    filters: params.Filters = params.EVERY_ITEM,
    seed: SeedOpt = 0,
    writings: WritingsOpt = None,
    judging: Judging = AS_JUDGED,
    local_judge: LocalJudgeOpt = False,
    parallel: ParallelOpt = None,
    redo_failed: RedoFailedOpt = False,
    reference_from: ReferenceFromOpt = None,
    control: params.Control = params.DEFAULT_CONTROL,
    batching: params.Batching = params.LIVE,
    shard: ShardOpt = None,
    money: Money = params.ASK,
    panel: PanelOpt = None,
    guard: GuardFlags = NO_GUARD,
) -> None:
    """Judge writings and append one judgment per (method, item, model) to --out.

    A method that calls a model needs a judge endpoint (--judge-base-url/--judge-model or the config file); without one the command stops, unless --local-judge lets the embedded local model judge: fine to try the pipeline, meaningless as scores.

    Every call is cached in the workspace, so a killed run resumes without repeating a finished call.
    """  # noqa: E501
    files = batching.files()
    flags = model_flags(files=files)
    if panel is None:  # a panel names its own judges
        check_judge(flags.judge, method, local_judge, "no judge is given")
    out = out or Path("judgments") / f"{method}.jsonl"
    job = JudgeJob(
        selection=filters.selection(seed=seed, writings=writings, strict=control.strict),
        execution=params.execution(flags, control, batching, console, parallel),
        out_path=out,
        method=method,
        endpoint=flags.judge,
        options=judging.options(method),
        redo_failed=redo_failed,
        reference_from=reference_from,
        panel=panel_spec(panel, method, flags.judge),
        shard=shard_of(shard),
        guard=guard.settings(),
    )
    calls = job.judge_endpoints if calls_a_model(method) else {}
    pays = spends_money(calls, cache_mode=flags.cache_mode, files=files)
    checked = preflight_plan(flags, calls, batch=batching.batch or bool(files))
    if not estimate_first("judge", lambda: run_async(plan_judges(job, control.prices)),
                          {lane: ep.capacity if ep else 1 for lane, ep in job.judge_endpoints.items()},
                          money, dry_run=control.dry_run, pays=pays, preflight=checked,
                          prices=control.prices, batch=batching.batch):
        return
    with spending_limit(money.max_cost), batch_rounds(console):
        judgments = run_async(judge_job(job))
    _summary(judgments, out)
    closing = closing_lines(judgments, seed, control.progress)
    finish(sum(j.status == "failed" for j in judgments), len(judgments), "judgments",
           "re-run with --redo-failed to judge them again", console, closing=closing)


def closing_lines(judgments: list[Judgment], seed: int, progress: bool) -> list[str]:
    """One line per judged model (report.headline), from the leaderboard of this command's judgments."""
    if not judgments:
        return []
    with step("closing lines: bootstrap intervals of each model's All", progress):
        return headlines(build_leaderboard(judgments, LeaderboardOptions(by="task", seed=seed)))


def register(app: typer.Typer) -> None:
    app.command("judge", epilog=EXIT_STATUSES, cls=GroupedCommand)(judge)
