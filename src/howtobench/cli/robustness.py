"""`howtobench robustness`: does a judge punish damaged writing? (paper section 6.2, Table 7)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from howtobench.cli.help_groups import GroupedCommand
from howtobench.cli.options import (
    DataOpt,
    EmptyOpt,
    FormatOpt,
    TaskOpt,
    model_flags,
    preflight_plan,
)
from howtobench.cli.params import (
    ASK,
    CALL_FILES,
    DEFAULT_CONTROL,
    JUDGE_ENDPOINT,
    MONEY_FLAGS,
    WRITER_ENDPOINT,
    Control,
    bundled,
    flags,
    group_of,
)
from howtobench.config import resolve_data_dir
from howtobench.event_loop import run as run_async
from howtobench.llm.budget import spending_limit
from howtobench.llm.dryrun import Estimate
from howtobench.report.tables import Document, show
from howtobench.robustness.apply import ALL_KINDS, PAPER_KINDS
from howtobench.robustness.plan import plan_robustness
from howtobench.robustness.suite import SuiteConfig, failures_left, needs, run_suite
from howtobench.robustness.table import as_table, headlines
from howtobench.steps.settings import Execution
from howtobench.steps.spending import spends_money

from .money import Money, estimate_first
from .status import EXIT_STATUSES, finish

MethodsOpt = Annotated[
    str,
    typer.Option("--methods", help="Comma-separated judge methods to test (any registered: bleu, rouge, tow, ...)."),
]
KindsOpt = Annotated[
    str,
    typer.Option(
        "--kinds",
        help=f"Comma-separated perturbations, or 'paper' (drop, repeat and the four transfers) or 'all'. "
        f"Known: {', '.join(ALL_KINDS)}.",
    ),
]
NOpt = Annotated[int, typer.Option("--n", min=1, help="Writings to sample in all (the paper: 50).")]
PerModelOpt = Annotated[int, typer.Option("--per-model", min=1, help="Writings to sample per model (the paper: 5).")]
SeedOpt = Annotated[
    int, typer.Option("--seed", min=0, help="Seed of the sample, of every perturbation and of the bootstrap intervals.")
]
RunDirOpt = Annotated[
    Path,
    typer.Option("--run-dir", help="Folder of this run: one file per stage; rerun the same command to resume."),
]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=1, help="Bootstrap resamples for the 95% intervals.")]


def parse_kinds(value: str) -> tuple[str, ...]:
    """'paper', 'all' or a comma-separated list of kind names."""
    if value.strip() == "paper":
        return PAPER_KINDS
    if value.strip() == "all":
        return tuple(ALL_KINDS)
    return tuple(k.strip() for k in value.split(",") if k.strip())


@flags(JUDGE_ENDPOINT, WRITER_ENDPOINT, CALL_FILES, after="data")
@bundled("money", Money, MONEY_FLAGS)
@bundled("control", Control, group_of(Control, "max_failed_rate", "dry_run", "prices", "no_progress"))
def robustness(
    run_dir: RunDirOpt,
    methods: MethodsOpt = "bleu,rouge,tow",
    kinds: KindsOpt = "paper",
    n: NOpt = 50,
    per_model: PerModelOpt = 5,
    seed: SeedOpt = 0,
    task: TaskOpt = None,
    bootstrap: BootOpt = 1000,
    empty: EmptyOpt = "exclude",
    data: DataOpt = None,
    fmt: FormatOpt = "table",
    control: Control = DEFAULT_CONTROL,
    money: Money = ASK,
) -> None:
    """Sample writings (per model, seeded), perturb them, judge originals and perturbed sets, print Table 7 and a
    closing line per judge (what it did wrong, its original score, the change under each perturbation).

    Each cell is the mean change of the score (perturbed − original) with a 95% bootstrap interval; ▲ marks a
    score that rose under damage, ≠ a reference control whose interval misses the reference anchor (ToW 6). A
    perturbation that leaves an empty writing is left out and counted, as the authors did (--empty).
    Transfers are rewritten by the writer (--base-url/--model), else the judge endpoint, else the embedded local
    model; LLM judges use the judge endpoint (--judge-base-url/--judge-model), else the local model (a 270M model
    for smoke runs: its numbers mean nothing). Every call is cached in the workspace.
    """
    flags = model_flags()
    suite = SuiteConfig(
        methods=tuple(m.strip() for m in methods.split(",") if m.strip()),
        kinds=parse_kinds(kinds),
        n=n,
        per_model=per_model,
        seed=seed,
        tasks=tuple(task) if task else None,
        n_boot=bootstrap,
        max_failed_rate=control.max_failed_rate,
        empty=empty,
    )
    data_root = resolve_data_dir(data)
    writer = flags.writer or flags.judge
    need_judge, need_writer = needs(suite, run_dir)
    calls = {"writer": writer if need_writer else None, "judge": flags.judge if need_judge else None}
    pays = spends_money(calls, cache_mode=flags.cache_mode)
    in_flight = {"writer": writer.capacity if writer else 1, "judge": flags.judge.capacity if flags.judge else 1}

    def plan() -> list[Estimate]:
        return run_async(plan_robustness(suite, data_root=data_root, run_dir=run_dir, judge_endpoint=flags.judge,
                                           writer_endpoint=flags.writer, prices=control.prices))

    checked = preflight_plan(flags, calls)
    if not estimate_first("robustness", plan, in_flight, money, dry_run=control.dry_run,
                          pays=pays, preflight=checked, prices=control.prices):
        return
    with spending_limit(money.max_cost):
        table = run_async(
            run_suite(suite, data_root=data_root, run_dir=run_dir, judge_endpoint=flags.judge,
                      writer_endpoint=flags.writer,
                      execution=Execution(workspace=flags.workspace, cache_mode=flags.cache_mode,
                                          prices=control.prices, preflight=flags.preflight,
                                          progress=control.progress))
        )
    # at the terminal's width (report.fit turns or wraps it to fit); padding kinds add the gameability table;
    # JSON: the whole robustness table as its record
    show(Document([as_table(table), *([table.gameability] if table.gameability else [])], data=asdict(table)), fmt)
    failed, total = failures_left(run_dir, suite)
    finish(failed, total, "judgments and perturbations",
           f"failed judgments stay in {run_dir / 'judgments'}, failed perturbations in "
           f"{run_dir / 'perturbed'}/*.failures.jsonl (delete a kind's files to perturb it again)",
           closing=headlines(table) if fmt == "table" else [])  # the other formats are read by programs or pasted


def register(app: typer.Typer) -> None:
    app.command("robustness", epilog=EXIT_STATUSES, cls=GroupedCommand)(robustness)
