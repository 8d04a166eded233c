"""`howtobench perturb` as a library call: one kind, one seed, one input file -> perturbed writings.

The output file is the state, as for the judge runner (both run on the step layer's `runloop.run_loop`): each
perturbed writing is appended (flushed, fsynced every half second and at the end) the moment it is made, so a run
stopped by --max-cost, a run-level error or a kill keeps every rewrite already paid for. A re-run reads the file
back (a line cut short by a kill is cut off), checks that it holds this kind and seed, and perturbs only the
writings it does not hold yet. Failed perturbations go to `<out>.failures.jsonl`, never into the output; they are
tried again by the next run, which starts that file afresh. Writings in flight: the step client's number (twice
the writer's slots for the LLM kinds; 8 for the rule-based ones, which call nothing); they were all started at
once.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.data.loader import LoadReport, load_items, load_release_writings, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.data.rows import first_json_object, is_judgments_row, read_appended_rows
from howtobench.errors import ConfigError, DataError
from howtobench.locks import output_lock
from howtobench.outputs import output_file, writing
from howtobench.robustness.apply import check_kinds, perturb_one
from howtobench.robustness.files import (
    Contexts,
    failures_path,
    writing_line,
    writings_for_judgments,
)
from howtobench.robustness.transfer import TRANSFER_KINDS
from howtobench.runloop import DurableLines, LoopSettings, run_loop
from howtobench.steps.client import StepClient, step_client
from howtobench.steps.settings import Execution


@dataclass(frozen=True)
class PerturbSummary:
    """What a perturb run wrote."""

    kind: str
    written: int
    failed: int
    out: Path
    failures_out: Path | None
    skipped_rows: tuple[str, ...] = ()
    kept: int = 0
    """Writings of the input the output already held from an earlier run (not perturbed again)."""

    @property
    def wrote_line(self) -> str:
        """What the run did to the output file, in one line."""
        earlier = f" ({self.kept} already there from an earlier run)" if self.kept else ""
        return f"{self.kind}: wrote {self.written} perturbed writings to {self.out}{earlier}"


def load_sources(source: Path, data_root: Path | None, report: LoadReport) -> tuple[list[Writing], dict[str, Item]]:
    """The writings to perturb and the items known for them (empty without a benchmark)."""
    items = {it.id: it for it in load_items(data_root, report=report)} if data_root else {}
    first = first_json_object(source)
    if first is None:
        raise DataError(f"{source} holds no rows")
    if is_judgments_row(first):
        if data_root is None:
            raise ConfigError(f"{source} is a judgment file: pass --data so the judged texts can be found")
        release = load_release_writings(data_root, items=list(items.values()), report=report)
        return writings_for_judgments(source, release), items
    return load_writings_file(source, items or None, report=report), items


def finished(out: Path, kind: str, seed: int, *, repair: bool = False) -> set[tuple[str, str]]:
    """(item, perturbed model) of the writings `out` holds from an earlier run, so a re-run skips them.

    A row made with another kind or seed is a ConfigError naming its line: resuming would mix two perturbations in
    one file. `repair` cuts off a last line a kill left half-written (only the run that appends next may)."""
    rows = read_appended_rows(out, Writing.model_validate_json, "a perturbed writing", repair=repair)
    for number, row in rows:
        extra = row.model_extra or {}
        made = extra.get("perturbation") or {}
        if made.get("kind") != kind or extra.get("base_seed") != seed:
            raise ConfigError(
                f"{out}:{number} holds a writing perturbed with --kind {made.get('kind')} --seed "
                f"{extra.get('base_seed')}, not --kind {kind} --seed {seed}: write to another -o, or delete the file "
                "to start over")
    return {(row.item_id, row.model) for _, row in rows}


def pending(writings: list[Writing], kind: str, done: set[tuple[str, str]]) -> tuple[list[Writing], int]:
    """The writings whose perturbation `done` does not hold yet (each once, in input order), and how many it
    holds already."""
    by_key = {(w.item_id, f"{w.model}+{kind}"): w for w in writings}
    todo = [w for key, w in by_key.items() if key not in done]
    return todo, len(by_key) - len(todo)


class _PerturbedSink:
    """The runner loop's sink: each perturbed writing appended to the output the moment it is made, a failed one to
    the file beside it (created at the first failure); the tally for the bar and the summary."""

    def __init__(self, out: DurableLines, stack: ExitStack) -> None:
        self.out, self.stack = out, stack
        self.failures: DurableLines | None = None
        self.written = self.failed = 0

    def record(self, made: tuple[Writing, bool]) -> bool:
        perturbed, ok = made
        self._file(ok).write(writing_line(perturbed))
        self.written += ok
        self.failed += not ok
        return not ok

    def stats(self) -> str:
        return f"written {self.written} · failed {self.failed}" if self.written or self.failed else ""

    def _file(self, ok: bool) -> DurableLines:
        if ok:
            return self.out
        if self.failures is None:
            self.failures = self.stack.enter_context(DurableLines(failures_path(self.out.path)))
        return self.failures


async def _append_perturbed(todo: list[Writing], kind: str, seed: int, contexts: Contexts, step: StepClient,
                            out: Path, progress: bool) -> _PerturbedSink:
    """Perturb `todo` through the runner loop, each result appended the moment it is made (the bar counts them)."""

    async def one(source: Writing) -> tuple[Writing, bool]:
        return await perturb_one(source, kind, seed, contexts, step.client)

    with ExitStack() as stack:
        sink = _PerturbedSink(stack.enter_context(DurableLines(out)), stack)
        await run_loop(todo, one, sink, LoopSettings(f"perturb · {kind}", step.in_flight, progress))
        return sink


def _restart_failures(out: Path) -> None:
    """Remove the failures an earlier run recorded beside `out`: their writings are tried again now."""
    with writing(failures_path(out)):
        failures_path(out).unlink(missing_ok=True)


async def perturb_file(source: Path, kind: str, seed: int, out: Path, *, execution: Execution,
                       data_root: Path | None = None, endpoint: EndpointConfig | None = None) -> PerturbSummary:
    """Perturb every writing of `source` with `kind` not yet in `out`, appending each to `out` as it is made
    (failures beside it); the output is locked meanwhile (a second process on it refuses). `execution`: the
    workspace, cache mode, price table and progress bar of the genre transfers' calls (live calls only)."""
    check_kinds([kind])
    report = LoadReport()
    writings, items = load_sources(source, data_root, report)
    if kind == "reference" and not items:
        raise ConfigError("the reference control needs the benchmark's references: pass --data")
    with output_lock(output_file(out)):
        todo, kept = pending(writings, kind, finished(out, kind, seed, repair=True))
        _restart_failures(out)
        async with step_client(endpoint, execution, purpose="model", run_id=None, items=len(todo),
                               calls_model=kind in TRANSFER_KINDS and bool(todo), check=False) as step:
            tally = await _append_perturbed(todo, kind, seed, Contexts(items), step, out, execution.progress)
    fail_out = failures_path(out) if tally.failed else None
    return PerturbSummary(kind, tally.written, tally.failed, out, fail_out, tuple(report.summary()), kept=kept)
