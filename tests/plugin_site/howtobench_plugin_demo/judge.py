"""Judge method `sentences`: the number of sentence ends in the writing, capped at 10 (calls no model). Its one
option `cap` is declared by its signature alone: `--judge-option cap=N` reaches it with no other file edited."""

from __future__ import annotations

from howtobench.data.models import Item, Writing
from howtobench.judges.base import Judgment, register_judge


class SentenceJudge:
    method = "sentences"

    def __init__(self, *, cap: int = 10) -> None:
        self.cap = cap

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        ends = sum(writing.output.count(mark) for mark in "。！？")
        return Judgment(method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                        score=float(min(self.cap, ends)))


@register_judge("sentences", takes=SentenceJudge, calls_model=False, description="sentence ends, capped (a plugin)")
def make(*, client: object = None, **options: int) -> SentenceJudge:
    return SentenceJudge(**options)
