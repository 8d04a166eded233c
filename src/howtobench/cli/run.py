"""`howtobench run`: generate → judge → leaderboard in one resumable run directory (the README's main command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli import params
from howtobench.cli.calibration_options import CalibrationOpt, check_run_calibration
from howtobench.cli.guard_options import NO_GUARD, GuardFlags
from howtobench.cli.help_groups import GroupedCommand
from howtobench.cli.length_options import AnchorCountOpt, LengthControlOpt, LengthSlopes, LengthSlopesOpt
from howtobench.config import EndpointConfig, resolve_data_dir
from howtobench.dry_run import plan_run
from howtobench.errors import ConfigError
from howtobench.event_loop import run as run_async
from howtobench.generate import safe_file_stem
from howtobench.judges.base import calls_a_model
from howtobench.judges.options import parse_judge_options, prompt_language_for, with_judge_options
from howtobench.llm.budget import spending_limit
from howtobench.report.headline import headlines
from howtobench.report.render import board_document
from howtobench.report.tables import show
from howtobench.run import run_benchmark
from howtobench.run_settings import RUN_OPTIONS, RunSettings, settings_from
from howtobench.steps.spending import spends_money

from .judge_flags import AS_JUDGED, Judging
from .judge_panel import PanelOpt, panel_spec
from .money import Money, estimate_first
from .options import (
    EmptyOpt,
    LocalJudgeOpt,
    ParallelOpt,
    ReferenceFromOpt,
    batch_rounds,
    check_judge,
    check_method,
    given_flags,
    model_flags,
    preflight_plan,
)
from .status import EXIT_STATUSES, finish

NameOpt = Annotated[
    str | None,
    typer.Option("--name", help="Name of the run (default: <model>-<method>, or smoke-local without endpoints)."),
]
RunDirOpt = Annotated[
    Path | None,
    typer.Option("--run-dir", help="Folder of the run (default runs/<name>). Re-running with the same folder resumes."),
]
MethodOpt = Annotated[
    str, typer.Option("--method", callback=check_method, help="Judge method: tow (Tree-of-Writing), bleu, rouge, "
                      "or a baseline (`howtobench list methods`).")
]
WritingsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--writings",
        help="Judge the writings in this JSONL file (infer_id, model, output per line) too; "
        "giving it turns generation off unless --generate is passed. Repeatable. The rows judged are copied to "
        "<run-dir>/writings/given/ for the report; bad rows are skipped and counted with file:line (--strict "
        "stops at the first).",
    ),
]
GenerateOpt = Annotated[
    bool | None,
    typer.Option(
        "--generate/--no-generate",
        help="Have the model under test write the selected items (default: yes, unless --writings is given).",
    ),
]
ReleaseOpt = Annotated[
    bool | None,
    typer.Option(
        "--release/--no-release",
        help="Also judge the paper's ten shipped models' writings of the selected items with your judge, so your "
        "model is ranked among them by the same judge (about ten times the judging cost: the estimate shows it "
        "on its own line first). Default: no with a paid judge — the paper's published Table 4 is shown as "
        "reference columns instead; yes when judging is free (embedded model, bleu / rouge).",
    ),
]
LocalWriterOpt = Annotated[
    bool,
    typer.Option(
        "--local-writer",
        help="Let the embedded local model (Gemma-3-270M) write the selected items while your judge endpoint "
        "judges them: a check of the pipeline, not a result. Without any endpoint the local model writes and judges "
        "anyway (the offline smoke run); with a judge endpoint and no writer, run stops unless this is given.",
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0,
                                      help="Seed of the writer's sampling, the bootstrap and --subset.")]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates for the 95% intervals.")]
PaperOpt = Annotated[
    bool, typer.Option("--paper/--no-paper", help="Show the paper's Table 4 scores as reference columns (tow only).")
]


def _name(
    name: str | None, writer: EndpointConfig | None, judge: EndpointConfig | None, method: str, generate: bool
) -> str:
    if name:
        return name
    local = (judge is None and calls_a_model(method)) or (generate and writer is None)
    if local:
        return f"smoke-local-{method}"
    label = writer.model if writer and generate else "writings"
    return safe_file_stem(f"{label}-{method}")


NO_WRITER = ("a judge endpoint is given but no writer: give your model with --base-url URL --model NAME, your "
             "writings with --writings FILE, or --local-writer to let the embedded 270M model write (a smoke test)")


def _generates(generate: bool | None, writings: list[Path] | None, local_writer: bool) -> bool:
    """Whether the run writes: as --generate/--no-generate says, else unless --writings brings the writings (or
    --local-writer asks the embedded model to write)."""
    if generate is False and local_writer:
        raise ConfigError("--local-writer and --no-generate contradict each other: give one")
    return generate if generate is not None else local_writer or not writings


def _check_writer(writer: EndpointConfig | None, judge: EndpointConfig | None, generates: bool,
                  local_writer: bool) -> None:
    """Stop before anything loads when the embedded model would write in place of the user's model.

    A judge endpoint says the user came to judge their own model: letting the 270M model write instead would be
    a silent fallback. With no endpoint at all the local model writing is the documented offline smoke run.
    """
    if local_writer and writer is not None:
        raise ConfigError("--local-writer and --base-url/--model contradict each other: give one")
    if generates and writer is None and judge is not None and not local_writer:
        raise ConfigError(NO_WRITER)


def _check_run_judge(writer: EndpointConfig | None, judge: EndpointConfig | None, writings: list[Path] | None,
                     method: str, local_judge: bool) -> None:
    """Mirror of `_check_writer`: a writer (or writings) without a judge stops before anything loads, unless
    --local-judge; with no endpoint and no writings at all the embedded model writes and judges (the smoke run)."""
    if writer is not None or writings or local_judge or judge is not None:
        given = "a writer is given" if writer is not None else "writings are given"
        check_judge(judge, method, local_judge, f"{given} but no judge")


def _calls(settings: RunSettings) -> dict[str, EndpointConfig | None]:
    """The endpoints the run calls a model on (role -> endpoint): the writer when it generates, the judges when
    the method calls a model (a metric calls none)."""
    return {"writer": settings.writer if settings.generate else None,
            **(settings.judge_endpoints if calls_a_model(settings.method) else {})}


def _in_flight(settings: RunSettings) -> dict[str, int]:
    """Calls at once per estimate role, for the time estimate."""
    judge = settings.judge.capacity if settings.judge else 1
    writer = settings.writer.capacity if settings.writer else 1
    panel = {lane: ep.capacity if ep else 1 for lane, ep in settings.judge_endpoints.items()}
    return {"writer": writer, "judge": judge, "judge (your writings)": judge,
            "judge (shipped models, --release)": judge, **panel}


@params.flags(params.WRITER_ENDPOINT, params.JUDGE_ENDPOINT, after="panel")
@params.flags(params.CALL_FILES, after="parallel")
@params.bundled("money", Money, params.MONEY_FLAGS)
@params.bundled("batching", params.Batching, params.BATCH_FLAGS)
@params.bundled("filters", params.Filters, (*params.ITEM_FILTERS, *params.group_of(params.Filters, "models")))
@params.bundled("control", params.Control, params.RUN_CONTROL)
@params.bundled("sampling", params.Sampling,
                 params.group_of(params.Sampling, "temperature", "max_tokens", "system_prompt"))
@params.bundled("judging", Judging, params.group_of(Judging, "judge_max_tokens", "prompt_language", "judge_option"))
@params.bundled("guard", GuardFlags)
def run(
    name: NameOpt = None,
    run_dir: RunDirOpt = None,
    filters: params.Filters = params.EVERY_ITEM,
    method: MethodOpt = "tow",
    writings: WritingsOpt = None,
    generate: GenerateOpt = None,
    local_writer: LocalWriterOpt = False,
    local_judge: LocalJudgeOpt = False,
    release: ReleaseOpt = None,
    sampling: params.Sampling = params.WRITER_DEFAULTS,
    seed: SeedOpt = 0,
    bootstrap: BootstrapOpt = 1000,
    paper: PaperOpt = True,
    empty: EmptyOpt = "exclude",
    length_control: LengthControlOpt = False,
    length_anchor: AnchorCountOpt = 0,
    length_slopes: LengthSlopesOpt = LengthSlopes.pooled,
    calibration: CalibrationOpt = None,
    panel: PanelOpt = None,
    judging: Judging = AS_JUDGED,
    reference_from: ReferenceFromOpt = None,
    parallel: ParallelOpt = None,
    control: params.Control = params.DEFAULT_CONTROL,
    batching: params.Batching = params.LIVE,
    money: Money = params.ASK,
    guard: GuardFlags = NO_GUARD,
) -> None:
    """Write the benchmark with your model, judge it (ToW by default), tabulate it next to the paper's Table 4.

    Before the first call to a configured endpoint the estimate is printed (calls, tokens, dollars, time); above
    --confirm-above it asks (without a terminal it refuses unless --yes), and --max-cost stops the run cleanly.
    Your model is judged; the paper's ten models appear as reference columns with their published scores (GPT-4o
    judge). --release re-judges their shipped writings with your judge too (its cost on its own line first).

    Everything lands in the run directory: config.yaml, writings/, judgments/, leaderboard.{md,json,csv},
    report.html and manifest.json (versions, endpoints without keys, tree/prompt hashes, seeds, data sha256, tokens
    and cost per purpose). Re-running the same command resumes without repeating a finished call. Empty writings
    are left out of the means and counted, as the authors did (--empty, recorded in config.yaml).

    With no endpoint at all, the embedded local model (Gemma-3-270M) writes and judges a small subset — the
    shortest item of each task, with the writings of three of the paper's models — in about a quarter of an hour
    on two idle cores (longer on a busy machine): a smoke test of the pipeline whose scores mean nothing, and the
    leaderboard says so. --limit and --models widen it. With a judge endpoint but neither a writer (--base-url,
    --model) nor --writings, run stops before loading anything and says what to give: the embedded model writes
    for a real judge only when asked (--local-writer).
    """
    files = batching.files()
    flags = model_flags(files=files)
    writer, judge = flags.writer, flags.judge
    spec = panel_spec(panel, method, judge)
    first_judge = judge if spec is None else spec.judges[0].endpoint  # a panel is a configured judge too
    do_generate = _generates(generate, writings, local_writer)
    _check_writer(writer, first_judge, do_generate, local_writer)
    _check_run_judge(writer, first_judge, writings, method, local_judge)
    run_name = _name(name, writer, first_judge, method, do_generate)
    check_run_calibration(calibration, first_judge.model if first_judge else None, method)
    given = given_flags()
    derived = {  # the values only the CLI decides (checked above); every other saved option as given
        "name": run_name, "run_dir": run_dir or Path("runs") / run_name, "data": resolve_data_dir(filters.data),
        "workspace": flags.workspace, "generate": do_generate, "writer": writer, "judge": judge,
        "prompt_language": prompt_language_for(method, judging.prompt_language), "panel": panel if spec else None,
    }
    values = {o.key: derived[o.key] if o.key in derived else given[o.key] for o in RUN_OPTIONS}
    settings = settings_from(values, {
        "panel": spec, "selection.strict": control.strict, "execution.cache_mode": flags.cache_mode,
        "execution.preflight": flags.preflight, "execution.progress": control.progress,
        "execution.max_failed_rate": control.max_failed_rate, "execution.batch": batching.settings(),
        "execution.files": files})
    with_judge_options(method, settings.judge_options, parse_judge_options(judging.judge_option))  # said now
    calls = _calls(settings)
    checked = preflight_plan(flags, calls, batch=batching.batch or bool(files))
    pays = spends_money(calls, cache_mode=settings.execution.cache_mode, files=settings.execution.files)
    if not estimate_first("run", lambda: run_async(plan_run(settings, control.prices)), _in_flight(settings),
                          money, dry_run=control.dry_run, pays=pays,
                          preflight=checked, prices=control.prices, batch=batching.batch):
        return
    with spending_limit(money.max_cost), batch_rounds(Console(stderr=True)):
        result = run_async(run_benchmark(settings))
    console = Console()
    show(board_document(result.leaderboard, headline=False), "table", console)
    console.print(f"run directory: {settings.run_dir} (leaderboard.md / .json / .csv, report.html, manifest.json)",
                  highlight=False)
    finish(result.failed, result.selected, "generations and judgments",
           "re-running retries failed generations; `howtobench judge --redo-failed` judges failed writings again",
           closing=headlines(result.leaderboard))


def register(app: typer.Typer) -> None:
    app.command("run", epilog=EXIT_STATUSES, cls=GroupedCommand)(run)
