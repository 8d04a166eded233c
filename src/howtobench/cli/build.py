"""`howtobench build ...`: make a benchmark of your own from human-written texts (paper 4.2-4.6).

Each step reads the previous step's file in the build directory (`--dir`) and writes its own, so a user can
stop after any step, inspect or correct the file by hand, and go on:
ingest -> classify -> filter -> make -> export -> (edit) -> import.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from howtobench.construct import pipeline
from howtobench.construct.classify import ClassifyReport
from howtobench.construct.ingest import IngestLimits, IngestReport, ingest
from howtobench.construct.make import MakeReport
from howtobench.construct.quality import SCORES, ScoreTable
from howtobench.construct.review import export_review, import_review
from howtobench.construct.workfile import REVIEW, REVIEW_HTML
from howtobench.data.models import TASKS
from howtobench.event_loop import run as run_async
from howtobench.llm.budget import spending_limit
from howtobench.llm.dryrun import model_name, price_plan
from howtobench.locks import output_lock
from howtobench.outputs import output_dir
from howtobench.steps.spending import spends_money

from .money import Money, estimate_first
from .options import (
    ApiKeyEnvOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    DryRunOpt,
    MaxFailedRateOpt,
    ModelFlags,
    ModelOpt,
    NoProgressOpt,
    PricesOpt,
    check_task,
    model_flags,
    preflight_plan,
    run_preflight,
)
from .params import ASK, CALL_FILES, MONEY_FLAGS, Group, bundled, flags
from .status import EXIT_STATUSES, finish

console = Console()

HELP = ("Build a benchmark of your own from human-written texts: ingest -> classify -> filter -> make -> "
        "export -> (edit the review file) -> import. Every step writes one JSONL file in --dir and can be "
        "resumed, inspected and corrected by hand. The model that classifies, rates and back-constructs is given "
        "with --base-url/--model (as for the model under test); without them the embedded local model is used.")

DirOpt = Annotated[Path, typer.Option("--dir", help="Build directory holding one JSONL file per step (created "
                                                    "if missing).")]
RetryOpt = Annotated[bool, typer.Option("--retry-failed", help="Ask again for texts whose call failed before. "
                                        "A reply rejected by our checks is cached; to reach the model again "
                                        "for it add --no-cache.")]

RETRY_HINT = "their rows carry the error; re-run with --retry-failed (and --no-cache for rejected replies) to ask again"
STEP_ENDPOINT: Group = (
    ("model", ModelOpt, None),
    ("base_url", BaseUrlOpt, None),
    ("api_key_env", ApiKeyEnvOpt, None),
    ("concurrency", ConcurrencyOpt, None),
)
"""The endpoint flags of the steps that call a model (classify, filter, make), in their --help order."""


def build_lock(build_dir: Path) -> contextlib.AbstractContextManager[None]:
    """One process per build directory: a second one refuses, naming the first (howtobench.locks)."""
    return output_lock(output_dir(build_dir), folder=True)


def _run(step: pipeline.Step, build_dir: Path, opts: pipeline.StepOptions, flags: ModelFlags,
         prices: Path | None, dry_run: bool, money: Money, progress_bar: bool = True) -> Any:
    """Estimate (dry run) or run a model-backed step with a progress bar (none with --no-progress); None for a
    dry run.

    No endpoint in `flags.writer` means the embedded local model. A configured endpoint sees the estimate first
    (and the --confirm-above / --max-cost rules) like generate, judge and run.
    """
    writer = flags.writer
    calls = {"writer": writer} if pipeline.needs_model(step, opts) else {}
    pays = spends_money(calls, cache_mode=flags.cache_mode)
    in_flight = {"writer": writer.capacity if writer else 1}
    total = pipeline.pending_count(step, build_dir, opts)
    checked = preflight_plan(flags, calls) if total else {}
    if not estimate_first(f"build {step}", lambda: [price_plan("writer", model_name(writer),
                                                               pipeline.plan(step, build_dir, opts), prices)],
                          in_flight, money, dry_run=dry_run, pays=pays, preflight=checked, prices=prices):
        return None
    with build_lock(build_dir):
        if total:  # after the lock: a second process refused on this build directory spends nothing
            run_preflight(flags, writer=writer)
        with spending_limit(money.max_cost):
            return run_async(pipeline.run(
                step, build_dir, opts, endpoint=writer, local=writer is None, workspace=flags.workspace,
                cache_mode=flags.cache_mode, progress=progress_bar, prices=prices))


def ingest_cmd(
    inputs: Annotated[list[Path], typer.Argument(help="Folders of .txt/.md files, .txt/.md files, or .jsonl files "
                                                      "with text, source and license per line.", exists=True)],
    build_dir: DirOpt,
    license: Annotated[str, typer.Option("--license", help="License recorded for texts from files, and for "
                                                          "JSONL rows without one.")] = "unknown",
    source: Annotated[str | None, typer.Option("--source", help="Source label for texts read from files (e.g. the "
                                               "site they came from; the quality table groups by it). Default: "
                                               "each file's path. JSONL rows carry their own.")] = None,
    min_chars: Annotated[int, typer.Option("--min-chars", min=1, help="Drop texts shorter than this many "
                                                                      "non-whitespace characters.")] = 200,
    max_chars: Annotated[int, typer.Option("--max-chars", min=1, help="Drop texts longer than this many "
                                                                      "non-whitespace characters.")] = 20000,
    language: Annotated[str, typer.Option("--language", help="auto (zh when CJK ideographs are over 30% of the "
                                                             "letters, else en), zh or en.")] = "auto",
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first bad JSONL row instead of skipping "
                                                          "and counting it.")] = False,
) -> None:
    """Step 1: read texts; drop exact and near duplicates (5-gram Jaccard >= 0.9) and out-of-range lengths."""
    if language not in ("auto", "zh", "en"):
        raise typer.BadParameter("must be auto, zh or en", param_hint="--language")
    with build_lock(build_dir):
        report = ingest(inputs, build_dir, license=license, source=source,
                        limits=IngestLimits(min_chars, max_chars), language=language, strict=strict)  # type: ignore[arg-type]
    _print_ingest(report)


def _print_ingest(report: IngestReport) -> None:
    kept, dropped = report.by_language, report.dropped
    console.print(
        f"read {report.read} texts, kept {report.kept} (zh {kept['zh']}, en {kept['en']}); dropped "
        f"{dropped['already_present']} already in the build, {dropped['exact_duplicates']} exact and "
        f"{dropped['near_duplicates']} near duplicates, {dropped['too_short']} too short, {dropped['too_long']} too "
        f"long, {dropped['empty']} empty", highlight=False)
    if report.bad_rows:
        console.print(f"[yellow]skipped {len(report.bad_rows)} bad input rows:[/]")
        for line in report.bad_rows[:20]:
            console.print(f"  {line}", markup=False, highlight=False)


@flags(STEP_ENDPOINT, CALL_FILES, after="build_dir")
@bundled("money", Money, MONEY_FLAGS)
def classify_cmd(
    build_dir: DirOpt, prices: PricesOpt = None, retry_failed: RetryOpt = False, dry_run: DryRunOpt = False,
    money: Money = ASK, max_failed_rate: MaxFailedRateOpt = None, no_progress: NoProgressOpt = False,
) -> None:
    """Step 2: an LLM gives each text one genre and a reason; correct 02_classify.jsonl by hand if needed."""
    flags = model_flags()
    opts = pipeline.StepOptions(retry_failed=retry_failed, max_failed_rate=max_failed_rate)
    report: ClassifyReport | None = _run("classify", build_dir, opts, flags, prices, dry_run,
                                                money, not no_progress)
    if report is not None:
        genres = ", ".join(f"{g} {n}" for g, n in sorted(report.by_genre.items()))
        console.print(f"classified {report.classified} texts ({genres}); {report.failed} failed (genre null, "
                      f"skipped by filter). Review {build_dir / '02_classify.jsonl'}.", highlight=False)
        finish(report.failed, report.classified + report.failed, "classifications", RETRY_HINT)


@flags(STEP_ENDPOINT, CALL_FILES, after="min_quality")
@bundled("money", Money, MONEY_FLAGS)
def filter_cmd(build_dir: DirOpt, min_quality: Annotated[int, typer.Option(
                   "--min-quality", min=1, max=5, help="Keep texts scoring at least this (1-5; the paper uses 4). "
                   "Changing it re-applies without new calls.")] = 4,
    prices: PricesOpt = None, retry_failed: RetryOpt = False, dry_run: DryRunOpt = False, money: Money = ASK,
    max_failed_rate: MaxFailedRateOpt = None, no_progress: NoProgressOpt = False,
) -> None:
    """Step 3: score each text 1-5 against its genre's rubric and keep those at or above --min-quality."""
    flags = model_flags()
    opts = pipeline.StepOptions(threshold=min_quality, retry_failed=retry_failed, max_failed_rate=max_failed_rate)
    table: ScoreTable | None = _run("filter", build_dir, opts, flags, prices, dry_run,
                                                money, not no_progress)
    if table is not None:
        console.print(score_table(table))
        failed = sum(table.failed.values())
        finish(failed, sum(table.total(source) for source in table.counts), "quality ratings", RETRY_HINT)


def score_table(table: ScoreTable) -> Table:
    """Texts per source and score, like the paper's Table 13, with failed and kept counts."""
    out = Table(title=f"Quality scores per source (kept: score >= {table.threshold})")
    out.add_column("source")
    for s in SCORES:
        out.add_column(str(s), justify="right")
    for name in ("failed", "total", "kept"):
        out.add_column(name, justify="right")
    for source, counts in sorted(table.counts.items()):
        out.add_row(source, *(str(counts[s]) for s in SCORES), str(table.failed.get(source, 0)),
                    str(table.total(source)), str(table.kept.get(source, 0)))
    if table.unclassified:
        out.caption = f"{table.unclassified} texts without a genre were not scored"
    return out


@flags(STEP_ENDPOINT, CALL_FILES, after="split")
@bundled("money", Money, MONEY_FLAGS)
def make_cmd(build_dir: DirOpt,
             task: Annotated[list[str] | None, typer.Option("--task", callback=check_task, help="Make items for "
                             "these tasks only (completion, guide, open); repeatable. Default: all three.")] = None,
             seed: Annotated[int, typer.Option("--seed", min=0,
                                               help="Seed for choosing the blanked paragraphs (and the "
                                               "task of each text with --split).")] = 0,
             split: Annotated[bool, typer.Option("--split", help="Make each text into ONE task, drawn per text "
                                                 "(disjoint references, as in the release) instead of one item "
                                                 "per task.")] = False,
    prices: PricesOpt = None, retry_failed: RetryOpt = False, dry_run: DryRunOpt = False, money: Money = ASK,
    max_failed_rate: MaxFailedRateOpt = None, no_progress: NoProgressOpt = False,
) -> None:
    """Step 4: Completion items by blanking 1-10 paragraphs; Guide/Open items by back-construction (S, T, G)."""
    flags = model_flags()
    opts = pipeline.StepOptions(tasks=tuple(task) if task else TASKS, seed=seed, retry_failed=retry_failed,
                                split=split, max_failed_rate=max_failed_rate)
    report: MakeReport | None = _run("make", build_dir, opts, flags, prices, dry_run,
                                                money, not no_progress)
    if report is not None:
        made = ", ".join(f"{t} {n}" for t, n in report.made.items()) or "none"
        failed = ", ".join(f"{t} {n}" for t, n in report.failed.items()) or "none"
        console.print(f"made: {made}; failed: {failed}", highlight=False)
        for line in report.errors[:20]:
            console.print(f"  {line}", markup=False, highlight=False)
        failed_items = sum(report.failed.values())
        finish(failed_items, failed_items + sum(report.made.values()), "items", RETRY_HINT)


def export_cmd(build_dir: DirOpt) -> None:
    """Step 5: write the review file (JSONL) and a static HTML page to check and edit every item."""
    with build_lock(build_dir):
        total, added = export_review(build_dir)
    console.print(f"{total} items for review ({added} new): edit {build_dir / REVIEW} or open "
                  f"{build_dir / REVIEW_HTML}, then run `howtobench build import`.", highlight=False)


def import_cmd(build_dir: DirOpt,
               out: Annotated[Path, typer.Option("-o", "--out", help="Benchmark directory to write "
                                                 "(<out>/<task>/aligned.jsonl, the release layout).")],
               review: Annotated[Path | None, typer.Option("--review", help="Edited review file. Default: "
                                                              "05_review.jsonl in --dir.")] = None,
               overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing benchmark "
                                                       "in --out.")] = False) -> None:
    """Step 6: apply the review edits (validated) and write the benchmark that every other command reads."""
    with build_lock(build_dir):
        report = import_review(build_dir, out, review=review, overwrite=overwrite)
    written = ", ".join(f"{t} {n}" for t, n in report.written.items())
    console.print(f"wrote {written} items to {out} ({report.edited} edited, {report.dropped} dropped); try "
                  f"`howtobench data stats --data {out}`.", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the `build` sub-app to the main command."""
    build = typer.Typer(name="build", no_args_is_help=True, help=HELP, rich_markup_mode=None)
    build.command("ingest")(ingest_cmd)
    build.command("classify", epilog=EXIT_STATUSES)(classify_cmd)
    build.command("filter", epilog=EXIT_STATUSES)(filter_cmd)
    build.command("make", epilog=EXIT_STATUSES)(make_cmd)
    build.command("export")(export_cmd)
    build.command("import")(import_cmd)
    app.add_typer(build, name="build")
