"""`howtobench generate`: the model under test writes for the benchmark, in the release's inference format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli import params
from howtobench.cli.help_groups import GroupedCommand
from howtobench.config import EndpointConfig
from howtobench.data.models import Item
from howtobench.dry_run import plan_generate
from howtobench.event_loop import run as run_async
from howtobench.generate import PROMPT_STYLES, GenerateSettings, failures_path
from howtobench.llm.budget import spending_limit
from howtobench.llm.dryrun import Estimate, model_name
from howtobench.steps.generate import GenerateJob, generate_job, generate_out_path
from howtobench.steps.spending import spends_money

from .money import Money, estimate_first
from .options import (
    ShardOpt,
    batch_rounds,
    model_flags,
    preflight_plan,
    shard_of,
)
from .status import EXIT_STATUSES, finish

console = Console(stderr=True)

OutOpt = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--out",
        help="Output JSONL (release inference format). Default: writings/<model>.jsonl. "
        "Re-running with the same file resumes: items already in it are skipped.",
    ),
]
SeedOpt = Annotated[int | None, typer.Option("--seed", min=0,
                                             help="Sampling seed sent to the server (recorded), and the "
                                              "seed of --subset.")]
StyleOpt = Annotated[
    str,
    typer.Option(
        "--prompt-style",
        help="release (default): the release's instruction and information joined by a blank line, exactly what "
        "the paper's models were asked, so writings compare with Table 4. framed: our own framing around them "
        "(delimiters, 'output only the filled-in text', 'give the complete text').",
    ),
]
LanguageOpt = Annotated[
    str | None,
    typer.Option("--prompt-language", help="With --prompt-style framed: zh or en templates (default: each item's "
                 "language)."),
]
NameOpt = Annotated[str | None, typer.Option("--name", help="Model name written into the output (default: --model).")]


def _plan(endpoint: EndpointConfig | None, items: list[Item], out: Path | None, settings: GenerateSettings,
          prices: Path | None, workspace: Path) -> Estimate:
    model = model_name(endpoint)
    return plan_generate(items, generate_out_path(out, settings, model), settings, model, prices, workspace)[0]


@params.flags(params.WRITER_ENDPOINT, params.CALL_FILES, after="name")
@params.bundled("money", Money, params.MONEY_FLAGS)
@params.bundled("batching", params.Batching, params.BATCH_FLAGS)
@params.bundled("filters", params.Filters, params.ITEM_FILTERS)
@params.bundled("control", params.Control, params.WRITING_CONTROL)
@params.bundled("sampling", params.Sampling)
def generate(
    out: OutOpt = None,
    filters: params.Filters = params.EVERY_ITEM,
    sampling: params.Sampling = params.WRITER_DEFAULTS,
    seed: SeedOpt = 0,
    prompt_style: StyleOpt = "release",
    prompt_language: LanguageOpt = None,
    name: NameOpt = None,
    control: params.Control = params.DEFAULT_CONTROL,
    batching: params.Batching = params.LIVE,
    shard: ShardOpt = None,
    money: Money = params.ASK,
) -> None:
    """Have the model under test write the benchmark: W = LLM(instruction, grounding).

    The model gets the release's instruction and information joined by a blank line, as the paper's models did
    (Completion: the instruction and the text with its [fill in the blank] marks; Guide: the instruction and the
    outline; Open: the instruction alone); --prompt-style framed adds our own framing. Reasoning traces are kept
    out of the writing (field `reasoning`); sampling, system prompt, prompt style and template hash are recorded
    with each line. A failed call is listed in
    <out>.failed.jsonl, never written as a writing, and retried by the next run. Without --base-url/--model the
    embedded local model writes (a smoke run).
    """
    files = batching.files()
    flags = model_flags(files=files)
    if prompt_language not in (None, "zh", "en"):
        raise typer.BadParameter("--prompt-language must be zh or en")
    if prompt_style not in PROMPT_STYLES:
        raise typer.BadParameter(f"--prompt-style must be one of {', '.join(PROMPT_STYLES)}")
    items = filters.items(seed or 0)
    settings = GenerateSettings(
        sampling=sampling.params(seed),
        system_prompt=sampling.system_prompt,
        prompt_style=prompt_style,  # type: ignore[arg-type]
        prompt_language=prompt_language,  # type: ignore[arg-type]
        model_name=name,
    )
    part = shard_of(shard)
    planned = items if part is None else part.pick(items, lambda item: item.id)
    calls = {"writer": flags.writer}
    if not estimate_first("generate", lambda: [_plan(flags.writer, planned, out, settings, control.prices,
                                                         flags.workspace)],
                          {"writer": flags.writer.capacity if flags.writer else 1}, money,
                          dry_run=control.dry_run,
                          pays=spends_money(calls, cache_mode=flags.cache_mode, files=files),
                          preflight=preflight_plan(flags, calls, batch=batching.batch or bool(files)),
                          prices=control.prices, batch=batching.batch):
        return
    execution = params.execution(flags, control, batching, console)
    job = GenerateJob(flags.writer, items, generate_out_path(out, settings, model_name(flags.writer)), settings,
                      execution, part)
    with spending_limit(money.max_cost), batch_rounds(console):
        summary = run_async(generate_job(job))
    console.print(
        f"{summary.model}: {summary.written} written ({summary.empty} empty, {summary.truncated} truncated), "
        f"{summary.skipped} already there, "
        f"{summary.failed} failed; {summary.usage.completion_tokens:,} completion tokens → {summary.out_path}",
        highlight=False,
    )
    if summary.truncated:
        console.print(f"[yellow]{summary.truncated} writings were cut by max_tokens or a content filter: kept, "
                      "flagged 'truncated' (the leaderboard counts them); raise --max-tokens to let them finish",
                      highlight=False)
    finish(summary.failed, summary.requested, "generations",
           f"they (with their reasons) are listed in {failures_path(summary.out_path)}; run again to retry them",
           console)


def register(app: typer.Typer) -> None:
    app.command("generate", epilog=EXIT_STATUSES, cls=GroupedCommand)(generate)
