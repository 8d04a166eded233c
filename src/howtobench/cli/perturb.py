"""`howtobench perturb`: damage writings in one documented, seeded way so any judge can score them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.options import (
    DataOpt,
    DryRunOpt,
    ModelFlags,
    NoProgressOpt,
    PricesOpt,
    model_flags,
    preflight_plan,
    run_preflight,
)
from howtobench.cli.params import ASK, CALL_FILES, MONEY_FLAGS, WRITER_ENDPOINT, bundled, flags
from howtobench.config import resolve_data_dir
from howtobench.errors import DataError
from howtobench.event_loop import run as run_async
from howtobench.llm.budget import spending_limit
from howtobench.llm.dryrun import Estimate
from howtobench.robustness.apply import ALL_KINDS
from howtobench.robustness.perturb_file import perturb_file
from howtobench.robustness.plan import plan_perturb
from howtobench.robustness.transfer import TRANSFER_KINDS
from howtobench.steps.settings import Execution
from howtobench.steps.spending import spends_money

from .money import Money, estimate_first
from .status import EXIT_STATUSES, finish

KIND_HELP = (
    "Perturbation: drop (1-3 paragraphs, or sentences in texts under 4 paragraphs), repeat (1-3 paragraphs copied "
    "elsewhere), shuffle (paragraphs), truncate (last third), pad (off-topic text of equal length), inject-start / "
    "inject-middle / inject-end (a line asking the judge for full marks), strip-headings (the markers the heading "
    "parser reads), reference (the benchmark's human reference as the candidate), transfer-comment / "
    "transfer-letter / transfer-official / transfer-poem (an LLM rewrites the genre)."
)
KindOpt = Annotated[str, typer.Option("--kind", help=KIND_HELP)]
SeedOpt = Annotated[
    int, typer.Option("--seed", min=0,
                      help="Base seed; each writing's seed is derived from it, its item, model and kind.")
]
InputArg = Annotated[
    Path,
    typer.Argument(
        help="Writings JSONL (release inferences or your own: infer_id, model, output) or a judgment results JSONL "
        "(its texts are looked up in the release writings under --data).",
        metavar="INPUT",
        exists=True,
        dir_okay=False,
    ),
]
OutOpt = Annotated[
    Path, typer.Option("-o", "--out", help="Where to write the perturbed writings (JSONL, release layout).")
]


@dataclass(frozen=True)
class Perturbing:
    """How `perturb` runs, as its flags give it (each field is its flag): the base seed, the benchmark, the
    estimate alone (--dry-run, --prices) and the bar."""

    seed: SeedOpt = 0
    data: DataOpt = None
    dry_run: DryRunOpt = False
    prices: PricesOpt = None
    no_progress: NoProgressOpt = False

    def execution(self, flags: ModelFlags) -> Execution:
        """How the transfer calls are answered: the workspace's cache, priced by --prices."""
        return Execution(workspace=flags.workspace, cache_mode=flags.cache_mode, prices=self.prices,
                         progress=not self.no_progress)


SEEDED = Perturbing()
"""The default of `perturb`'s `job` parameter (what the flags' defaults make)."""


@flags(WRITER_ENDPOINT, CALL_FILES, after="data")
@bundled("money", Money, MONEY_FLAGS)
@bundled("job", Perturbing)
def perturb(source: InputArg, kind: KindOpt, output: OutOpt, job: Perturbing = SEEDED, money: Money = ASK) -> None:
    """Perturb every writing of INPUT with one kind and write them in the release layout.

    Each output row keeps `infer_id` and `output`, renames `model` to `<model>+<kind>` (so a judge, the resume key
    and the leaderboard treat it as one more model), and adds `source_model`, `base_seed` and `perturbation` (the
    kind, the derived seed and every change with its positions). Failed perturbations (a transfer call that
    failed) go to `<output>.failures.jsonl`, never into the output.

    The benchmark is read like every other command reads it (--data, else $HOWTOBENCH_DATA, else the copy of
    `howtobench data download`): it gives each item's language, its reference (--kind reference), other items'
    references as filler for pad, and the texts of a judgment file. Rows of items it does not hold are skipped
    and counted with file:line.

    The transfer kinds rewrite with the model given by --base-url/--model (the "writer"); without one, the embedded
    local model rewrites (fine for trying the pipeline, not for real results). Each perturbed writing is appended to
    the output as soon as it is made, and re-running the command perturbs only the writings the output does not hold
    yet, so a run stopped by --max-cost or killed keeps every rewrite it paid for (the output must hold the same
    kind and seed; failed ones are tried again). With an endpoint, the estimate is shown before the first call.
    """
    flags = model_flags()
    data_root = resolve_data_dir(job.data)
    transfers = kind in TRANSFER_KINDS

    def plan() -> list[Estimate]:
        return [run_async(plan_perturb(source, kind, job.seed, data_root=data_root, endpoint=flags.writer,
                                         prices=job.prices, out=output))]

    calls = {"writer": flags.writer} if transfers else {}  # the other kinds rewrite with no model
    pays = spends_money(calls, cache_mode=flags.cache_mode)
    in_flight = {"writer": flags.writer.capacity if flags.writer else 1}
    checked = preflight_plan(flags, calls)
    if not estimate_first("perturb", plan, in_flight, money, dry_run=job.dry_run,
                          pays=pays, preflight=checked, prices=job.prices):
        return
    if transfers:
        run_preflight(flags, writer=flags.writer)
    with spending_limit(money.max_cost):
        summary = run_async(perturb_file(source, kind, job.seed, output, data_root=data_root, endpoint=flags.writer,
                                         execution=job.execution(flags)))
    console = Console(stderr=True)
    for line in summary.skipped_rows:
        console.print(f"[yellow]{line}[/]", highlight=False)
    if summary.written + summary.kept + summary.failed == 0:
        skipped = ": every row was skipped (see above)" if summary.skipped_rows else ""
        raise DataError(f"{source} holds no writing to perturb{skipped}")
    console.print(summary.wrote_line, highlight=False)
    total = summary.written + summary.failed
    finish(summary.failed, total, "perturbations", f"recorded in {summary.failures_out}; re-running the same "
           "command tries them again", console)


def register(app: typer.Typer) -> None:
    app.command("perturb", help=f"Perturb writings for a robustness test. Kinds: {', '.join(ALL_KINDS)}.",
                epilog=EXIT_STATUSES)(perturb)
