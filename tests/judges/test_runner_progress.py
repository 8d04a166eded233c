"""The judging bar moves while a CPU-only judge (BLEU / ROUGE) works, not only when it has finished."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from howtobench import runloop as loop
from howtobench.data.models import Item, Writing
from howtobench.judges import runner
from howtobench.judges.base import Judgment


class _CpuJudge:
    """Never awaits anything, like the overlap metrics; logs each writing it judges."""

    method = "cpu"

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        self.events.append("judged")
        return Judgment(method=self.method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                        score=1.0)


class _Bar:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def add_task(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def update(self, task: int, advance: int = 0, **kwargs: Any) -> None:
        self.events.append("advanced")


async def test_bar_advances_between_writings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []

    @contextmanager
    def fake_progress(enabled: bool) -> Any:
        yield _Bar(events)

    monkeypatch.setattr(loop, "stats_progress", fake_progress)
    items = [Item(infer_id=f"i{k}", task_type="open", basic_instruction="x") for k in range(40)]
    pairs = [(it, Writing(infer_id=it.id, model="m", output="y")) for it in items]
    await runner.run_judge(_CpuJudge(events), pairs, tmp_path / "out.jsonl", concurrency=8)
    assert events.count("judged") == events.count("advanced") == 40
    first_advance = events.index("advanced")
    assert first_advance <= 2 * 8  # within two rounds of --parallel 8, not after all 40 (the bug: 40)
