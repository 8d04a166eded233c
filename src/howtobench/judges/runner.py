"""Run any judge over (item, writing) pairs into a resumable JSONL file (used by every method).

The output file is the state: one `Judgment` per line, appended (flushed, fsynced at least every
half second and at the end) as soon as it finishes, so a killed run loses at most the judgments in
flight. On restart the file is read back, a truncated last line (the kill happened mid-write) is cut
off, and every (method, item, model) already there is skipped; with `redo_failed` the ones whose
status is "failed" are judged again (the newer line wins when the file is read).

Only a writing-level error (errors.py: the judge answered but no valid reply after re-asks, a writing too
long for its context) becomes a "failed" judgment. A run-level one (bad key, unreachable or dead endpoint,
replay miss, ...) says nothing about the writing: it cancels the judgments in flight, writes no row for
them and propagates, so the CLI prints one line and a re-run resumes. `max_failed_rate` stops the run the
same way once too many judgments have failed (`outcome.FailureBudget`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path

from howtobench.concurrency import as_finished
from howtobench.data.models import Item, Writing
from howtobench.data.rows import read_appended_rows
from howtobench.errors import DataError, HowtobenchError, WritingTooLong, is_run_level
from howtobench.judges.base import Judge, Judgment, with_lengths
from howtobench.llm.types import Usage
from howtobench.outcome import FailureBudget
from howtobench.outputs import AppendOnly, output_file
from howtobench.progress import stats_progress

Key = tuple[str, str, str]
FSYNC_EVERY_S = 0.5


def read_judgments(path: Path, *, repair: bool = False) -> dict[Key, Judgment]:
    """The judgments in a JSONL file by key (the last line of a key wins); a torn last line is ignored
    (and cut off the file when `repair` is true), any other bad line is an error naming file and line."""
    rows = read_appended_rows(path, Judgment.model_validate_json, "a judgment record", repair=repair)
    return {judgment.key: judgment for _, judgment in rows}


def failed_judgment(judge: Judge, item: Item, writing: Writing, error: Exception) -> Judgment:
    """The record of a writing the judge could not judge at all (the error is kept, no score invented)."""
    return Judgment(
        method=judge.method,
        item_id=item.id,
        model=writing.model,
        task=item.task,
        genre=item.genre,
        status="failed",
        failures=[f"{type(error).__name__}: {error}"],
    )


MAX_WRITING_CHARS = 200_000  # ~28 times the longest writing of the release (7,128), past any judge's context


async def judge_or_fail(judge: Judge, item: Item, writing: Writing) -> Judgment:
    """The judge's judgment; a writing-level error becomes a failed judgment, a run-level one is raised.

    A writing over MAX_WRITING_CHARS fails before any call or metric: a 15 MB row kept BLEU busy for minutes
    and stored its prompt in the call log again for every leaf."""
    try:
        if len(writing.output) > MAX_WRITING_CHARS:
            raise WritingTooLong(f"the writing has {len(writing.output):,} characters, over the limit of "
                                 f"{MAX_WRITING_CHARS:,} (no judge's context holds it); nothing was sent for it")
        return with_lengths(await judge.judge(item, writing), item, writing)
    except HowtobenchError as exc:
        if is_run_level(exc):
            raise
        return with_lengths(failed_judgment(judge, item, writing, exc), item, writing)


class _Sink:
    """Appends judgments to the output file durably enough to resume after a kill (write errors are
    OutputErrors naming the file: see howtobench.outputs)."""

    def __init__(self, handle: AppendOnly) -> None:
        self.handle = handle
        self.last_sync = time.monotonic()

    def write(self, judgment: Judgment) -> None:
        self.handle.write(judgment.model_dump_json() + "\n")
        if time.monotonic() - self.last_sync >= FSYNC_EVERY_S:
            self.sync()

    def sync(self) -> None:
        self.handle.sync()
        self.last_sync = time.monotonic()


def _stats(usage: Usage, failed: int) -> str:
    tokens = usage.prompt_tokens + usage.completion_tokens
    calls = f"calls {usage.calls} (cached {usage.cached_calls})"
    return f"{calls} · tokens {tokens:,} · {usage.cost_text()} · failed {failed}"


async def run_judge(
    judge: Judge,
    pairs: Iterable[tuple[Item, Writing]],
    out_path: Path,
    *,
    concurrency: int = 8,
    progress: bool = True,
    redo_failed: bool = False,
    max_failed_rate: float | None = None,
) -> list[Judgment]:
    """Judge every pair not yet in `out_path`, appending each judgment as it finishes.

    Returns the judgments of all `pairs` (earlier runs' and new ones) in the order of `pairs`.
    `concurrency` bounds the writings judged at once; the client layer bounds the calls. Raises the
    first run-level error (nothing written for it) and `TooManyFailures` past `max_failed_rate`.
    """
    if concurrency < 1:
        raise DataError("concurrency must be at least 1")
    pairs = list(pairs)
    output_file(out_path)
    done = read_judgments(out_path, repair=True)
    todo = list({
        (judge.method, i.id, w.model): (i, w)
        for i, w in pairs
        if _needs_judging(done.get((judge.method, i.id, w.model)), redo_failed)
    }.values())
    gate = asyncio.Semaphore(concurrency)

    async def one(item: Item, writing: Writing) -> Judgment:
        async with gate:
            judgment = await judge_or_fail(judge, item, writing)
            # A judge that never waits (BLEU / ROUGE are CPU-only) would otherwise run every writing before the
            # loop below sees one finish, leaving the bar at 0 until the end: hand the loop back once per writing.
            await asyncio.sleep(0)
        return judgment.model_copy(update={"writing_truncated": True}) if writing.truncated else judgment

    usage, budget = Usage(), FailureBudget(len(todo), max_failed_rate, "judgments")
    with AppendOnly(out_path) as handle, stats_progress(progress) as bar:
        sink = _Sink(handle)
        task = bar.add_task(f"judge · {judge.method}", total=len(todo), stats=_stats(usage, 0))
        try:
            async with as_finished(one(i, w) for i, w in todo) as finished:
                async for judgment in finished:
                    sink.write(judgment)
                    done[judgment.key] = judgment
                    usage = usage + judgment.usage
                    bar.update(task, advance=1, stats=_stats(usage, budget.failed + (judgment.status == "failed")))
                    budget.record(judgment.status == "failed")
        finally:
            sink.sync()
    return [done[(judge.method, i.id, w.model)] for i, w in pairs]


def _needs_judging(existing: Judgment | None, redo_failed: bool) -> bool:
    return existing is None or (redo_failed and existing.status == "failed")
