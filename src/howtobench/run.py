"""One benchmark run end to end: generate → judge → leaderboard, in a run directory that is its own state.

    runs/<name>/
      config.yaml              the settings of the run (endpoints without keys)
      writings/<model>.jsonl   what the model under test wrote (release inference format)
      writings/given/<file>    a copy of the --writings rows the run judged (so the report shows their text)
      judgments/<method>.jsonl one Judgment per (item, model)
      leaderboard.{md,json,csv}
      manifest.json            versions, endpoints, hashes, seeds, data version, tokens and cost per purpose

Every step appends to its file as it goes and skips what is already there, and every model call goes
through the cached client, so re-running the same command after a crash or a kill resumes where it
stopped and ends with the same table. With no endpoint configured the embedded local model writes and
judges a small subset (the shortest item of each task, with the writings of three of the paper's shipped
models spanning its Table 4): a smoke test of the whole pipeline on a laptop, labelled as such everywhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items, load_release_writings, load_writings_file, select_items
from howtobench.data.models import TASKS, Item, Writing
from howtobench.data.paper import paper_table4
from howtobench.data.reference_source import load_reference_source, swap_references
from howtobench.errors import ConfigError, DataError
from howtobench.generate import (
    GenerateSettings,
    GenerateSummary,
    generate_writings,
    safe_file_stem,
    template_hash,
)
from howtobench.guard.guard import Guard, guarded
from howtobench.judges.base import Judgment, build_judge, calls_a_model, method_info
from howtobench.judges.options import parse_judge_options, with_judge_options
from howtobench.judges.runner import run_judge
from howtobench.llm.accounting import usage_from_log
from howtobench.llm.cache import DB_NAME
from howtobench.llm.preflight import preflight_endpoints
from howtobench.llm.types import SamplingParams, Usage
from howtobench.locks import output_lock
from howtobench.outputs import output_dir, undone_if_empty, write_text_atomic
from howtobench.progress import step
from howtobench.report.calibrated import calibrated_leaderboard
from howtobench.report.html import ReportOptions, write_report
from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions
from howtobench.report.length_control import length_controlled, sources_from
from howtobench.report.render import board_text
from howtobench.robustness.anchor import anchor_file, anchor_sample, anchor_variants
from howtobench.run_settings import RunSettings, run_config
from howtobench.steps.batch_files import import_for
from howtobench.steps.client import endpoint_or_local, step_client
from howtobench.steps.job_identity import JobIdentity, data_digest, digest_of, files_digest
from howtobench.steps.judge import open_panel_judge
from howtobench.steps.settings import Execution
from howtobench.version import __version__

log = logging.getLogger(__name__)

# The smoke subset. Measured on this 2-core machine, one ToW leaf call on the 270M model costs 5-10 CPU-seconds
# (a ~350-token prompt suffix after the shared prefix, and grammar-constrained decoding over a 262k vocabulary),
# so a writing costs 30-60 s and the full "2 items x 10 shipped models" set would take over half an hour. One
# item per task and three shipped models spanning the paper's Table 4 (ranks 1, 5 and 10) keep it near ten
# minutes; --limit and --models widen it.
SMOKE_PER_TASK = 1
SMOKE_RELEASE_MODELS = ("deepseek-r1", "gemini-2.0-flash", "Llama-3.3-70B-Instruct")
SMOKE_MAX_TOKENS = 128
# The local judge asks nothing again (the client's re-asks; the method's own smoke options, such as ToW's in
# judges/tree_of_writing.py, cap its replies).
SMOKE_JUDGE_REASKS = 0
SMOKE_NOTE = (
    "SMOKE JUDGE: every score here comes from the embedded Gemma-3-270M base model, run offline to show that the "
    "pipeline works end to end. These numbers say nothing about how well the models write."
)


@dataclass
class RunResult:
    """What `run_benchmark` produced (files are in `settings.run_dir`)."""

    settings: RunSettings
    leaderboard: Leaderboard
    manifest: dict[str, Any]
    generation: GenerateSummary | None
    judgments: int = 0
    failed_judgments: int = 0

    @property
    def failed(self) -> int:
        """Writing-level failures left: writings not generated plus judgments that failed."""
        return (self.generation.failed if self.generation else 0) + self.failed_judgments

    @property
    def selected(self) -> int:
        return (self.generation.requested if self.generation else 0) + self.judgments


# ------------------------------------------------------------------ selection


def select_run_items(settings: RunSettings, all_items: Sequence[Item], release: Sequence[Writing]) -> list[Item]:
    """The items of the run: the user's filters; for a local smoke run without filters, the shortest few per task.

    Short items keep the 270M model's prompts small, which is what makes the smoke run take minutes.
    """
    sel = settings.selection
    chosen = select_items(all_items, sel.tasks, sel.genres, sel.limit, sel.ids, sel.subset, sel.seed)
    if not settings.smoke_subset:
        return chosen
    longest: dict[str, int] = {}
    for w in release:
        longest[w.item_id] = max(longest.get(w.item_id, 0), len(w.output))
    picked: list[Item] = []
    for task in TASKS:
        pool = [it for it in chosen if it.task == task]
        pool.sort(key=lambda it: (len(it.information) + len(it.reference) + longest.get(it.id, 0), it.id))
        picked += pool[:SMOKE_PER_TASK]
    return picked


def _release_writings(settings: RunSettings, all_items: Sequence[Item]) -> list[Writing]:
    if not settings.judges_release:
        return []
    tasks = sorted({it.task for it in all_items})
    models = settings.selection.models or (SMOKE_RELEASE_MODELS if settings.smoke_subset else None)
    return load_release_writings(settings.selection.data_dir, tasks, models, items=all_items)


def user_writings(settings: RunSettings, items: Sequence[Item]) -> list[list[Writing]]:
    """The --writings rows of the selected `items`, per file. A row for an item the filters left out is not bad;
    a row for no benchmark item at all is (skipped and counted, or stops the run with `strict`)."""
    if not settings.selection.writings:
        return []
    every_item = load_items(settings.selection.data_dir)
    selected = {it.id for it in items}
    return [load_writings_file(path, every_item, strict=settings.selection.strict, selected=selected)
            for path in settings.selection.writings]


def load_generated_writings(path: Path, items: Sequence[Item]) -> list[Writing]:
    """The run's own generated writings of the selected `items` (an earlier, wider selection is no bad row)."""
    return load_writings_file(path, selected={it.id for it in items})


def copy_given_writings(settings: RunSettings, given: Sequence[Sequence[Writing]]) -> list[Path]:
    """Keep the --writings rows the run judges in `writings/given/`, so its report shows their text.

    A copy grows with each resume (a row is keyed by item and model); a row whose text changed since the copy is
    replaced and said, because its judgment (keyed the same way) is the one of the old text.
    """
    folder = settings.run_dir / "writings" / "given"
    stems: dict[str, int] = {}
    written: list[Path] = []
    for path, writings in zip(settings.selection.writings, given, strict=True):
        stem = safe_file_stem(path.stem)
        stems[stem] = stems.get(stem, 0) + 1
        target = folder / (f"{stem}.jsonl" if stems[stem] == 1 else f"{stem}-{stems[stem]}.jsonl")
        rows = {(w.item_id, w.model): w for w in load_writings_file(target)} if target.is_file() else {}
        changed = [w for w in writings if (old := rows.get((w.item_id, w.model))) and old.output != w.output]
        if changed:
            log.warning("%d writings in %s changed since the run copied them to %s; their judgments are of the old "
                        "text (use another --run-dir to judge the new one)", len(changed), path, target)
        rows.update({(w.item_id, w.model): w for w in writings})
        lines = "".join(json.dumps(w.model_dump(mode="json", by_alias=True), ensure_ascii=False) + "\n"
                        for w in rows.values())
        write_text_atomic(target, lines)
        written.append(target)
    return written


# ------------------------------------------------------------------ endpoints and judges


@asynccontextmanager
async def _endpoints(settings: RunSettings) -> AsyncIterator[tuple[EndpointConfig | None, EndpointConfig | None]]:
    """(writer, judge): the configured endpoints, the embedded local model standing in for missing ones."""
    if not settings.uses_local:
        yield settings.writer, settings.judge
        return
    async with endpoint_or_local(None, replay=settings.execution.cache_mode == "replay") as local:
        writer = (settings.writer or local) if settings.generate else settings.writer
        local_judge = local.model_copy(update={"reasks": SMOKE_JUDGE_REASKS})
        yield writer, local_judge if settings.needs_local_judge else settings.judge


# ------------------------------------------------------------------ the run


def _check_config(settings: RunSettings) -> None:
    """A run directory belongs to one judge and method: resuming it with others would mix their judgments.
    Reads only: config.yaml is written by `_write_config` once the preflight has passed."""
    path = settings.run_dir / "config.yaml"
    if path.exists():
        old = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        old_judge = old.get("panel") or (old.get("judge") or {}).get("model")
        new_judge = str(settings.panel_file) if settings.panel is not None else settings.judge_label
        if old.get("method") != settings.method or old_judge != new_judge:
            raise ConfigError(
                f"{settings.run_dir} holds a run of method {old.get('method')!r} judged by {old_judge or 'local'!r}; "
                "choose another --run-dir (or --name) for a different judge or method"
            )


def _check_keys(settings: RunSettings) -> None:
    """Each API-key variable the run needs is set (ConfigError naming the variable, never the value), before
    anything is written: a run that cannot call its models leaves no file behind."""
    execution = settings.execution
    if execution.cache_mode == "replay" or execution.files is not None:  # batch files: nothing is sent from here
        return
    judges = [(ep, calls_a_model(settings.method)) for ep in settings.judge_endpoints.values()]
    for ep, used in ((settings.writer, settings.generate), *judges):
        if ep is not None and used:
            ep.api_key()


def _write_config(settings: RunSettings) -> None:
    path = settings.run_dir / "config.yaml"
    output_dir(settings.run_dir)
    write_text_atomic(path, CONFIG_HEADER + yaml.safe_dump(run_config(settings), allow_unicode=True, sort_keys=False))


CONFIG_HEADER = "# The options of this run. `howtobench run --config THIS_FILE` repeats it (and resumes it).\n"


def writer_sampling(settings: RunSettings) -> SamplingParams:
    """The sampling the writer really gets: the local model's writings are capped at SMOKE_MAX_TOKENS."""
    if not (settings.uses_local and settings.writer is None):
        return settings.sampling
    cap = min(settings.sampling.max_tokens or SMOKE_MAX_TOKENS, SMOKE_MAX_TOKENS)
    return settings.sampling.model_copy(update={"max_tokens": cap})


async def _generate(
    settings: RunSettings, writer: EndpointConfig | None, items: Sequence[Item]
) -> tuple[GenerateSummary | None, list[Writing]]:
    if not settings.generate:
        return None, []
    if writer is None:
        raise ConfigError(
            "nothing to generate with: give --base-url/--model for the model under test, or --no-generate"
        )
    gen = GenerateSettings(sampling=writer_sampling(settings), system_prompt=settings.system_prompt)
    out = settings.run_dir / "writings" / f"{safe_file_stem(writer.model)}.jsonl"
    step_execution = _execution(settings)
    async with step_client(writer, step_execution, purpose="writer", run_id=settings.run_id, items=len(items),
                           per_slot=1, check=False) as step:
        assert step.client is not None  # a writer always calls a model
        summary = await generate_writings(step.client, items, out, settings=gen, concurrency=step.in_flight,
                                          progress=step_execution.progress,
                                          max_failed_rate=step_execution.max_failed_rate)
    return summary, load_generated_writings(out, items)


async def _judge(
    settings: RunSettings, judge_ep: EndpointConfig | None, pairs: list[tuple[Item, Writing]], out: Path | None = None
) -> list[Judgment]:
    out = out or settings.run_dir / "judgments" / f"{settings.method}.jsonl"
    # The local llama.cpp server answers one request at a time and reuses only the previous prompt's prefix:
    # judging one writing at a time keeps its leaf prompts (which share a long prefix) back to back.
    execution = _execution(settings, parallel=1 if settings.needs_local_judge else settings.execution.parallel)
    if settings.panel is not None:
        async with open_panel_judge(settings.panel, settings.method, _judge_options(settings), execution,
                                    run_id=settings.run_id, items=len(pairs), check=False) as (judge, in_flight):
            return await run_judge(guarded(judge, Guard(settings.guard)), pairs, out, concurrency=in_flight,
                                   progress=settings.execution.progress,
                                   max_failed_rate=settings.execution.max_failed_rate)
    async with step_client(judge_ep, execution, purpose="judge", run_id=settings.run_id, items=len(pairs),
                           calls_model=judge_ep is not None and calls_a_model(settings.method),
                           check=False) as step:
        judge = guarded(build_judge(settings.method, step.client, _judge_options(settings)), Guard(settings.guard))
        return await run_judge(judge, pairs, out, concurrency=step.in_flight, progress=settings.execution.progress,
                               max_failed_rate=settings.execution.max_failed_rate)


def _execution(settings: RunSettings, parallel: int | None = None) -> Execution:
    """How one step of the run calls its models: the run's execution with that step's writings in flight (the
    preflight of every endpoint runs once, before the first step, not per step)."""
    return replace(settings.execution, parallel=parallel, preflight=False, report=_report_batch)


def _judge_options(settings: RunSettings) -> dict[str, Any]:
    """The user's judge options (the flags', then each --judge-option, converted by the method), over the smoke
    defaults when ToW runs on the local model."""
    given = with_judge_options(settings.method, settings.judge_options, parse_judge_options(settings.judge_option))
    if settings.needs_local_judge:
        return {**method_info(settings.method).smoke_options, **given}
    return given


def _report_batch(line: str) -> None:
    log.warning("%s", line)


def _pairs(items: Sequence[Item], writings: Sequence[Writing]) -> list[tuple[Item, Writing]]:
    by_id = {it.id: it for it in items}
    pairs = [(by_id[w.item_id], w) for w in writings if w.item_id in by_id]
    if not pairs:
        raise DataError("no writings to judge for the selected items (generate, --writings, or the shipped ones)")
    return pairs


def _reference_pairs(settings: RunSettings, all_items: Sequence[Item],
                     pairs: list[tuple[Item, Writing]]) -> list[tuple[Item, Writing]]:
    """With `reference_from`, the pairs judged against that model's writings (self-judgments left out, counted)."""
    if settings.reference_from is None:
        return pairs
    swap = load_reference_source(settings.reference_from, settings.selection.data_dir, all_items)
    kept, counts = swap_references(pairs, swap)
    log.warning("%s", counts.line(swap.source))
    if not kept:
        raise DataError(f"no writing left to judge against the references from {swap.source}")
    return kept


def with_run_identity(settings: RunSettings, items: Sequence[Item], release: Sequence[Writing]) -> RunSettings:
    """The run with its batch files (if any) keyed by what it asks (`steps/job_identity.py`): models, method,
    sampling, selection and the content of its items, shipped writings and writings files."""
    files = settings.execution.files
    if files is None:
        return settings
    sel = settings.selection
    asked = {"writer": settings.writer.model if settings.writer else None, "judge": settings.judge_label,
             "method": settings.method, "judge_options": {k: str(v) for k, v in sorted(settings.judge_options.items())},
             "sampling": settings.sampling.model_dump(mode="json"), "system_prompt": settings.system_prompt,
             "generate": settings.generate, "release": settings.judges_release,
             "reference_from": settings.reference_from,
             "tasks": sel.tasks, "genres": sel.genres, "models": sel.models, "limit": sel.limit, "subset": sel.subset,
             "ids": sel.ids, "seed": sel.seed,
             "data": digest_of([data_digest(items, release), files_digest(sel.writings)])}
    execution = replace(settings.execution, files=files.of(JobIdentity.of(asked)))
    return settings.model_copy(update={"execution": execution})


async def run_benchmark(settings: RunSettings) -> RunResult:
    """Generate, judge and tabulate; resumable. Returns the leaderboard and the manifest written to disk.

    The run directory is locked for the whole run: a second process on it refuses, naming this one. A run that
    fails before writing anything (a refused preflight) leaves no empty run directory."""
    with undone_if_empty(settings.run_dir), output_lock(output_dir(settings.run_dir), folder=True):
        return await _run_locked(settings)


async def _run_locked(settings: RunSettings) -> RunResult:
    """Everything is checked (config, keys, inputs, the preflight) before the first file of the run is written."""
    _check_config(settings)
    _check_keys(settings)
    all_items = load_items(settings.selection.data_dir, settings.selection.tasks)
    release = _release_writings(settings, all_items)
    items = select_run_items(settings, all_items, release)
    if not items:
        raise DataError("the filters select no item")
    given = user_writings(settings, items)
    execution = settings.execution
    await preflight_endpoints({"writer": settings.writer if settings.generate else None,
                               **(settings.judge_endpoints if calls_a_model(settings.method) else {})},
                              enabled=execution.preflight and execution.batch is None and execution.files is None,
                              cache_mode=execution.cache_mode,
                              workspace=execution.workspace,
                              run_id=settings.run_id)
    settings = with_run_identity(settings, items, release)
    if settings.execution.files is not None:  # once for both steps (each step's client then reads the stored answers)
        import_for(execution.workspace, settings.execution.files, settings.run_id, _report_batch)
    _write_config(settings)
    copy_given_writings(settings, given)
    async with _endpoints(settings) as (writer, judge_ep):
        generation, generated = await _generate(settings, writer, items)
        writings = [*release, *(w for rows in given for w in rows), *generated]
        judgments = await _judge(settings, judge_ep, _reference_pairs(settings, all_items, _pairs(items, writings)))
        anchor = await _anchor(settings, judge_ep, all_items, items, writings)
    with step("leaderboard (bootstrap intervals), manifest and report.html", settings.execution.progress):
        mine = sorted({w.model for w in generated} | {w.model for rows in given for w in rows})
        board = _leaderboard(settings, judgments, items, writings, mine, anchor)
        manifest = build_manifest(settings, writer, judge_ep, items, judgments) | {"under_test": mine}
        _write_outputs(settings, board, manifest)
    return RunResult(settings=settings, leaderboard=board, manifest=manifest, generation=generation,
                     judgments=len(judgments), failed_judgments=sum(j.status == "failed" for j in judgments))


def anchor_pairs_for(settings: RunSettings, items: Sequence[Item],
                     writings: Sequence[Writing]) -> list[tuple[Item, Writing]]:
    """The pad/truncate variants `--length-anchor N` judges, with their items (robustness.anchor)."""
    by_id = {it.id: it for it in items}
    sample = anchor_sample([w for w in writings if w.item_id in by_id], by_id, settings.length_anchor,
                           settings.selection.seed)
    return [(by_id[v.item_id], v) for v in anchor_variants(sample, by_id, settings.selection.seed)]


async def _anchor(settings: RunSettings, judge_ep: EndpointConfig | None, all_items: Sequence[Item],
                  items: Sequence[Item], writings: Sequence[Writing]) -> list[Judgment]:
    """Judge the anchor variants into RUN_DIR/anchor/ (nothing without --length-anchor)."""
    if not settings.length_anchor:
        return []
    pairs = _reference_pairs(settings, all_items, anchor_pairs_for(settings, items, writings))
    return await _judge(settings, judge_ep, pairs, anchor_file(settings.run_dir, settings.method))


def _leaderboard(settings: RunSettings, judgments: Sequence[Judgment], items: Sequence[Item],
                 writings: Sequence[Writing], under_test: Sequence[str] = (),
                 anchor: Sequence[Judgment] = ()) -> Leaderboard:
    """The run's table; `under_test` (the models of its own and given writings, not the shipped ones) are marked;
    `anchor` the judgments of --length-anchor's variants."""
    smoke = settings.needs_local_judge
    return calibrated_leaderboard(judgments, LeaderboardOptions(
        seed=settings.selection.seed,
        n_boot=settings.bootstrap,
        items=items,
        paper=paper_table4() if settings.paper and method_info(settings.method).paper_scale else None,
        title=f"{'SMOKE · ' if smoke else ''}HoWToBench run {settings.name} ({len(items)} items)",
        notes=[SMOKE_NOTE] if smoke else [],
        empty=settings.empty,
        length_controlled=_controlled(settings, bool(anchor)),
        lengths=sources_from(items, writings) if _controlled(settings, bool(anchor)) else None,
        length_anchor=anchor,
        length_slopes=settings.length_slopes,
        under_test=under_test,
    ), settings.calibration)


def _controlled(settings: RunSettings, anchored: bool) -> bool:
    return length_controlled(settings.length_control, anchored, settings.length_slopes)


def _write_outputs(settings: RunSettings, board: Leaderboard, manifest: dict[str, Any]) -> None:
    d = settings.run_dir
    for suffix, format_name in (("md", "markdown"), ("json", "json"), ("csv", "csv")):
        write_text_atomic(d / f"leaderboard.{suffix}", board_text(board, format_name))
    write_text_atomic(d / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    options = ReportOptions(empty=settings.empty, calibration=settings.calibration,
                            length_slopes=settings.length_slopes,
                            length_control=_controlled(settings, settings.length_anchor > 0))
    write_report([d], d / "report.html", options)  # as `howtobench report RUN_DIR`


# ------------------------------------------------------------------ manifest


def data_version(data_dir: Path, tasks: Sequence[str]) -> dict[str, str]:
    """sha256 of each task's aligned.jsonl: which benchmark release the numbers are about."""
    return {t: hashlib.sha256((data_dir / t / "aligned.jsonl").read_bytes()).hexdigest() for t in tasks}


def _usage(settings: RunSettings) -> dict[str, dict[str, Any]]:
    """Tokens, calls, cost, failures and retries per purpose over every resume of this run (from the call log)."""
    if not (settings.execution.workspace / DB_NAME).exists():  # a run that called no model (metrics, given writings)
        return {"total": Usage().model_dump()}
    rows = usage_from_log(settings.execution.workspace, settings.run_id, settings.execution.prices)
    out = {r.purpose: {**r.usage.model_dump(), "failed": r.failed, "retries": r.retries} for r in rows}
    total = sum((r.usage for r in rows), Usage())
    return {**dict(sorted(out.items())), "total": total.model_dump()}


def _endpoint_info(ep: EndpointConfig | None, configured: EndpointConfig | None) -> dict[str, Any] | None:
    if ep is None:
        return None
    return {**ep.public(), "embedded_local_model": configured is None}


def build_manifest(
    settings: RunSettings,
    writer: EndpointConfig | None,
    judge_ep: EndpointConfig | None,
    items: Sequence[Item],
    judgments: Sequence[Judgment],
) -> dict[str, Any]:
    tasks = sorted({it.task for it in items})
    languages = sorted({it.language for it in items})
    data_dir = settings.selection.data_dir
    return {
        "toolkit": __version__,
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "name": settings.name,
        "method": settings.method,
        "smoke": settings.needs_local_judge,
        "writer": _endpoint_info(writer, settings.writer) if settings.generate else None,
        "judge": _endpoint_info(judge_ep, settings.judge),
        "panel": ({"rule": settings.panel.rule, "judges": {m.name: m.endpoint.public() for m in settings.panel.judges}}
                  if settings.panel else None),
        "tree_hashes": sorted({j.tree_hash for j in judgments if j.tree_hash}),
        "prompt_hashes": sorted({j.prompt_hash for j in judgments if j.prompt_hash}),
        "prompt_language": settings.judge_options.get("prompt_language"),
        "reference_sources": sorted({j.reference_source for j in judgments if j.reference_source}),
        "prompt_languages": sorted({j.prompt_language for j in judgments if j.prompt_language}),
        "generation_templates": {f"{lang}/{t}": template_hash(lang, t) for lang in languages for t in tasks},
        "sampling": writer_sampling(settings).model_dump(mode="json"),
        "judge_options": {k: v if v is None or isinstance(v, bool | int | float) else str(v)  # JSON true, not "True"
                          for k, v in _judge_options(settings).items()},
        "system_prompt": settings.system_prompt,
        "seeds": {"bootstrap": settings.selection.seed, "sampling": settings.sampling.seed},
        "bootstrap": settings.bootstrap,
        "data": {"dir": str(data_dir), "aligned_sha256": data_version(data_dir, tasks)},
        "items": [it.id for it in items],
        "judgments": len(judgments),
        "usage": _usage(settings),
        "outputs": sorted(str(p.relative_to(settings.run_dir)) for p in settings.run_dir.rglob("*.jsonl")),
    }
