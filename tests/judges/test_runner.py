"""The generic resumable runner, with a trivial judge (length of the writing)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from howtobench.data.models import Item, Writing
from howtobench.errors import (
    BadResponse,
    CacheMiss,
    ConfigError,
    ContextTooLong,
    OutputError,
    PermanentError,
    RowError,
    ServerDied,
    TooManyFailures,
    Unreachable,
)
from howtobench.judges.base import Judgment
from howtobench.judges.runner import read_judgments, run_judge
from howtobench.llm.types import Usage


class LengthJudge:
    """Scores a writing by its length; records every call; a writing containing 'boom' gets no valid reply."""

    method = "length"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.active = 0
        self.max_active = 0

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        self.calls.append((item.id, writing.model))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        if "boom" in writing.output:
            raise BadResponse("exploded")
        return Judgment(
            method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
            score=float(len(writing.output)), usage=Usage(calls=1, prompt_tokens=10, completion_tokens=2),
        )


def make_pairs(n: int, models: tuple[str, ...] = ("m1", "m2")) -> list[tuple[Item, Writing]]:
    items = [Item(infer_id=f"i{k}", task_type="guide", basic_instruction="写", genre="essay") for k in range(n)]
    return [(it, Writing(infer_id=it.id, model=m, output="x" * (k + 1))) for k, it in enumerate(items) for m in models]


async def test_judges_all_in_order_and_bounds_concurrency(tmp_path: Path) -> None:
    judge, out = LengthJudge(), tmp_path / "out" / "j.jsonl"
    result = await run_judge(judge, make_pairs(5), out, concurrency=3, progress=False)
    first = [(j.item_id, j.model, j.score) for j in result][:3]
    assert first == [("i0", "m1", 1.0), ("i0", "m2", 1.0), ("i1", "m1", 2.0)]
    assert len(out.read_text().splitlines()) == 10
    assert judge.max_active <= 3


async def test_resume_skips_done_and_tolerates_truncated_last_line(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    await run_judge(LengthJudge(), make_pairs(2), out, progress=False)
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25], encoding="utf-8")  # killed mid-write
    judge = LengthJudge()
    result = await run_judge(judge, make_pairs(3), out, progress=False)
    assert sorted(judge.calls) == [("i1", "m2"), ("i2", "m1"), ("i2", "m2")]
    assert len(result) == 6
    assert len(read_judgments(out)) == 6
    assert all(line.startswith("{") and line.endswith("}") for line in out.read_text().splitlines())


async def test_judge_errors_become_failed_records_and_can_be_redone(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    pairs = make_pairs(1, models=("m1",))
    bad = [(pairs[0][0], Writing(infer_id="i0", model="m1", output="boom"))]
    [failed] = await run_judge(LengthJudge(), bad, out, progress=False)
    assert failed.status == "failed" and failed.score is None and "exploded" in failed.failures[0]
    judge = LengthJudge()
    await run_judge(judge, pairs, out, progress=False)
    assert judge.calls == []  # failed is recorded as done unless asked
    [redone] = await run_judge(judge, pairs, out, progress=False, redo_failed=True)
    assert redone.status == "ok" and redone.score == 1.0


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    out.write_text('{"oops": 1}\n{"also": 2}\n', encoding="utf-8")
    with pytest.raises(RowError, match="j.jsonl:1"):
        read_judgments(out)


async def test_complete_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    await run_judge(LengthJudge(), make_pairs(1), out, progress=False)
    out.write_text(out.read_text().rstrip("\n"), encoding="utf-8")  # killed between the record and its newline
    judge = LengthJudge()
    result = await run_judge(judge, make_pairs(2), out, progress=False)
    assert sorted(judge.calls) == [("i1", "m1"), ("i1", "m2")] and len(result) == 4
    assert len(read_judgments(out)) == 4 and len(out.read_text().splitlines()) == 4


class StoppingJudge(LengthJudge):
    """Raises `error` on item i1 (after the first item finished); every later writing hangs until cancelled."""

    hang_s = 3600.0

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.cancelled = 0

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        if item.id == "i0":
            return await super().judge(item, writing)
        if item.id == "i1":
            await asyncio.sleep(0.05)
            raise self.error
        try:
            await asyncio.sleep(self.hang_s)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("not reached")


RUN_LEVEL = [
    PermanentError("http://h/v1/chat/completions answered HTTP 401 for model m: bad key"),
    Unreachable("http://h/v1: connection refused"),
    CacheMiss("replay mode: call abc is not cached"),
    ServerDied("the local model server died"),
    ConfigError("bad settings"),
    OutputError("/out: read-only"),
    RuntimeError("a bug is not a fact about a writing either"),
]


@pytest.mark.parametrize("error", RUN_LEVEL, ids=lambda e: type(e).__name__)
async def test_run_level_error_stops_at_once_writes_no_row_and_a_rerun_resumes(tmp_path: Path,
                                                                                error: Exception) -> None:
    out, pairs = tmp_path / "j.jsonl", make_pairs(6, models=("m1",))
    judge = StoppingJudge(error)
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(type(error)):
        await run_judge(judge, pairs, out, concurrency=6, progress=False)
    assert loop.time() - start < judge.hang_s / 100  # the hanging judgments were not waited for ...
    assert judge.cancelled == 4  # ... they were cancelled, and had ended before the error propagated
    assert [(j.item_id, j.status) for j in read_judgments(out).values()] == [("i0", "ok")]  # no failed row
    again = LengthJudge()
    result = await run_judge(again, pairs, out, progress=False)
    assert sorted(again.calls) == [(f"i{k}", "m1") for k in range(1, 6)]
    assert [j.status for j in result] == ["ok"] * 6


@pytest.mark.parametrize("error", [BadResponse("no valid reply after 3 asks"), ContextTooLong("8192 tokens")])
async def test_writing_level_errors_are_recorded_and_the_run_goes_on(tmp_path: Path, error: Exception) -> None:
    class Once(LengthJudge):
        async def judge(self, item: Item, writing: Writing) -> Judgment:
            if item.id == "i1":
                raise error
            return await super().judge(item, writing)

    result = await run_judge(Once(), make_pairs(3, models=("m1",)), tmp_path / "j.jsonl", progress=False)
    assert [j.status for j in result] == ["ok", "failed", "ok"]
    assert result[1].failures == [f"{type(error).__name__}: {error}"]


async def test_max_failed_rate_stops_early_after_writing_the_failed_rows(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    pairs = [(it, Writing(infer_id=it.id, model=w.model, output="boom")) for it, w in make_pairs(20, models=("m1",))]
    judge = LengthJudge()
    with pytest.raises(TooManyFailures, match="3 of the 3 judgments finished so far failed"):
        await run_judge(judge, pairs, out, concurrency=1, progress=False, max_failed_rate=0.2)
    assert len(judge.calls) == 4  # 3/10 > 0.2: the fourth writing, already started, was cancelled unrecorded
    assert [j.status for j in read_judgments(out).values()] == ["failed"] * 3
    rerun = await run_judge(LengthJudge(), pairs, out, concurrency=1, progress=False)
    assert len(rerun) == 20 and len(out.read_text().splitlines()) == 20  # resumed, nothing judged twice


async def test_every_judgment_records_the_writing_and_reference_lengths(tmp_path: Path) -> None:
    item = Item(infer_id="i0", task_type="guide", basic_instruction="写", reference="参考" * 5)
    pairs = [(item, Writing(infer_id="i0", model="m1", output="abc")),
             (item, Writing(infer_id="i0", model="m2", output="boom!"))]
    result = await run_judge(LengthJudge(), pairs, tmp_path / "j.jsonl", progress=False)
    assert [(j.status, j.writing_chars, j.reference_chars) for j in result] == [("ok", 3, 10), ("failed", 5, 10)]
    assert [j.writing_chars for j in read_judgments(tmp_path / "j.jsonl").values()] == [3, 5]
