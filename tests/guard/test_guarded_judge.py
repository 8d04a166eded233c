"""A judge behind the guard: skip answers without a call and says why; flag records the signals on the judgment."""

from __future__ import annotations

import asyncio
from pathlib import Path

from crafted import guide_item_and_writing, repeated_paragraph

from howtobench.data.models import Item, Writing
from howtobench.guard.guard import (
    FLOOR,
    SKIPPED_PREFIX,
    Guard,
    GuardedJudge,
    GuardSettings,
    guard_record,
    guarded,
    is_skipped,
    skipped_reward,
)
from howtobench.judges.base import Judgment


class CountingJudge:
    method = "tow"

    def __init__(self) -> None:
        self.calls = 0

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        self.calls += 1
        return Judgment(method="tow", item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                        score=7.0)


def _judge(guard: Guard, item: Item, text: str) -> tuple[Judgment, int]:
    inner = CountingJudge()
    judgment = asyncio.run(GuardedJudge(inner, guard).judge(item, Writing(infer_id=item.id, model="m", output=text)))
    return judgment, inner.calls


def test_skip_makes_no_call_and_declares_the_floor(bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    judgment, calls = _judge(Guard(GuardSettings(mode="skip")), item, repeated_paragraph(writing))
    assert calls == 0 and judgment.status == "failed" and judgment.score is None
    assert judgment.failures[0].startswith(SKIPPED_PREFIX) and "loop_paragraphs" in judgment.failures[0]
    assert is_skipped(judgment) and skipped_reward(judgment) == FLOOR
    assert judgment.writing_chars == len(repeated_paragraph(writing))


def test_skip_with_null_or_number_reward(bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    null, _ = _judge(Guard(GuardSettings(mode="skip", reward=None)), item, repeated_paragraph(writing))
    assert is_skipped(null) and skipped_reward(null) is None
    given, _ = _judge(Guard(GuardSettings(mode="skip", reward=-1.0)), item, repeated_paragraph(writing))
    assert skipped_reward(given) == -1.0


def test_flag_judges_and_records_signals(bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    judgment, calls = _judge(Guard(GuardSettings(mode="flag")), item, repeated_paragraph(writing))
    record = guard_record(judgment)
    assert calls == 1 and judgment.score == 7.0 and record is not None and not is_skipped(judgment)
    assert "loop_paragraphs" in record["flags"] and record["signals"]["repeated_paragraph_share"] > 0.9
    clean, _ = _judge(Guard(GuardSettings(mode="skip")), item, writing)
    assert guard_record(clean) == {"signals": guard_record(clean)["signals"], "flags": [], "skipped": False}


def test_off_is_the_judge_itself() -> None:
    inner = CountingJudge()
    assert guarded(inner, Guard(GuardSettings(mode="off"))) is inner and guarded(inner, None) is inner
