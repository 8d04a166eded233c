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

from collections.abc import Iterable
from pathlib import Path

from howtobench.data.models import Item, Writing
from howtobench.data.rows import read_appended_rows
from howtobench.errors import HowtobenchError, WritingTooLong, is_run_level
from howtobench.judges.base import Judge, Judgment, with_lengths
from howtobench.llm.types import Usage
from howtobench.outputs import output_file
from howtobench.runloop import DurableLines, LoopSettings, run_loop

Key = tuple[str, str, str]


def read_judgments(path: Path, *, repair: bool = False) -> dict[Key, Judgment]:
    """The judgments in a JSONL file by key (the last line of a key wins); a torn last line is ignored
    (and cut off the file when `repair` is true), any other bad line is an error naming file and line."""
    rows = read_appended_rows(path, Judgment.model_validate_json, "a judgment record", repair=repair)
    return {judgment.key: judgment for _, judgment in rows}


def failed_judgment(judge: Judge, item: Item, writing: Writing, error: Exception) -> Judgment:
    """The record of a writing the judge could not judge at all (the error is kept, no score invented), with the
    options the judge was built with (`OptionsRecorded.built_with`) as its judgments have."""
    return Judgment(
        method=judge.method,
        item_id=item.id,
        model=writing.model,
        task=item.task,
        genre=item.genre,
        status="failed",
        failures=[f"{type(error).__name__}: {error}"],
        judge_options=getattr(judge, "built_with", {}),
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


class _JudgmentSink:
    """Appends each finished judgment to the output (`DurableLines`) and keeps the run's tally for the bar."""

    def __init__(self, out: DurableLines, done: dict[Key, Judgment]) -> None:
        self.out = out
        self.done = done
        self.usage = Usage()
        self.failed = 0

    def record(self, judgment: Judgment) -> bool:
        self.out.write(judgment.model_dump_json() + "\n")
        self.done[judgment.key] = judgment
        self.usage = self.usage + judgment.usage
        failed = judgment.status == "failed"
        self.failed += failed
        return failed

    def stats(self) -> str:
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        calls = f"calls {self.usage.calls} (cached {self.usage.cached_calls})"
        return f"{calls} · tokens {tokens:,} · {self.usage.cost_text()} · failed {self.failed}"


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
    """Judge every pair not yet in `out_path`, appending each judgment as it finishes (`runloop.run_loop`).

    Returns the judgments of all `pairs` (earlier runs' and new ones) in the order of `pairs`.
    `concurrency` bounds the writings judged at once; the client layer bounds the calls. Raises the
    first run-level error (nothing written for it) and `TooManyFailures` past `max_failed_rate`.
    """
    pairs = list(pairs)
    output_file(out_path)
    done = read_judgments(out_path, repair=True)
    todo = list({
        (judge.method, i.id, w.model): (i, w)
        for i, w in pairs
        if _needs_judging(done.get((judge.method, i.id, w.model)), redo_failed)
    }.values())

    async def one(pair: tuple[Item, Writing]) -> Judgment:
        item, writing = pair
        judgment = await judge_or_fail(judge, item, writing)
        return judgment.model_copy(update={"writing_truncated": True}) if writing.truncated else judgment

    settings = LoopSettings(f"judge · {judge.method}", concurrency, progress, max_failed_rate, "judgments")
    with DurableLines(out_path) as out:
        await run_loop(todo, one, _JudgmentSink(out, done), settings)
    return [done[(judge.method, i.id, w.model)] for i, w in pairs]


def _needs_judging(existing: Judgment | None, redo_failed: bool) -> bool:
    return existing is None or (redo_failed and existing.status == "failed")
