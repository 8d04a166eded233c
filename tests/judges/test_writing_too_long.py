"""Issue 23, defect 6 (writings): a writing over the stated limit fails before any call or metric.

A 15 MB row kept BLEU busy for over five minutes at 1.9 GB, and a too-long writing's prompt was stored in the
call log once per leaf; now it is a writing-level failure (a failed row with the reason, the run goes on).
"""

from __future__ import annotations

from pathlib import Path

from howtobench.data.models import Item, Writing
from howtobench.judges.base import Judgment, build_judge
from howtobench.judges.runner import MAX_WRITING_CHARS, run_judge


class Counting:
    """A judge that counts what it is asked to judge."""

    method = "counting"

    def __init__(self) -> None:
        self.asked = 0

    async def judge(self, item: Item, writing: Writing) -> object:
        self.asked += 1
        raise AssertionError("a too-long writing must not reach the judge")


def _pair(chars: int) -> tuple[Item, Writing]:
    item = Item(infer_id="i0", task_type="guide", basic_instruction="写", genre="essay", reference="参考" * 50)
    return item, Writing(infer_id="i0", model="m", output="长" * chars)


async def test_a_writing_over_the_limit_fails_before_the_judge(tmp_path: Path) -> None:
    judge = Counting()
    [judgment] = await run_judge(judge, [_pair(MAX_WRITING_CHARS + 1)], tmp_path / "j.jsonl",  # type: ignore[arg-type]
                                 progress=False)
    assert judge.asked == 0 and judgment.status == "failed" and judgment.score is None
    assert judgment.failures == [f"WritingTooLong: the writing has {MAX_WRITING_CHARS + 1:,} characters, over the "
                                 f"limit of {MAX_WRITING_CHARS:,} (no judge's context holds it); nothing was sent "
                                 "for it"]


async def test_bleu_on_a_huge_writing_is_refused_at_once(tmp_path: Path) -> None:
    [judgment] = await run_judge(build_judge("bleu", None, {}), [_pair(5_000_000)], tmp_path / "j.jsonl",
                                 progress=False)
    assert judgment.status == "failed" and (judgment.failures or [""])[0].startswith("WritingTooLong")


class Length:
    method = "length"

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        return Judgment(method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                        score=float(len(writing.output)))


async def test_a_writing_at_the_limit_is_judged(tmp_path: Path) -> None:
    [judgment] = await run_judge(Length(), [_pair(MAX_WRITING_CHARS)], tmp_path / "j.jsonl",  # type: ignore[arg-type]
                                 progress=False)
    assert judgment.status == "ok" and judgment.score == MAX_WRITING_CHARS
