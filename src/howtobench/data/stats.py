"""The shape of the benchmark, like the paper's Table 2: counts and lengths per task, genre and model.

Lengths are in characters (`len` of the text, as the paper counts Chinese characters). Writing lengths are
averaged over all writings, empty ones counting as zero, so a model with many empty outputs is not flattered;
the number of empty writings is reported next to it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from howtobench.data.genres import is_known_label
from howtobench.data.loader import LoadReport, load_items, load_release_writings
from howtobench.data.models import Item, Writing
from howtobench.data.release import ReleaseCheck, check_release

ALL = "all"


class LengthStats(BaseModel):
    """Mean and median length in characters."""

    mean: float
    median: float

    @classmethod
    def of(cls, texts: Sequence[str]) -> LengthStats:
        lengths = [len(t) for t in texts]
        if not lengths:
            return cls(mean=0.0, median=0.0)
        return cls(mean=round(statistics.fmean(lengths), 1), median=float(statistics.median(lengths)))


class GroupStats(BaseModel):
    """Instructions in one task or one genre, and the lengths of their three texts."""

    instructions: int
    instruction_chars: LengthStats
    information_chars: LengthStats
    reference_chars: LengthStats

    @classmethod
    def of(cls, items: Sequence[Item]) -> GroupStats:
        return cls(
            instructions=len(items),
            instruction_chars=LengthStats.of([it.instruction for it in items]),
            information_chars=LengthStats.of([it.information for it in items]),
            reference_chars=LengthStats.of([it.reference for it in items]),
        )


class ModelStats(BaseModel):
    """One model's writings in one task."""

    writings: int
    empty: int
    mean_chars: float


class BenchStats(BaseModel):
    """Everything `howtobench data stats` prints; `--json` dumps exactly this."""

    data: str
    tasks: dict[str, GroupStats]
    genres: dict[str, dict[str, GroupStats]]
    models: dict[str, dict[str, ModelStats]]
    unmapped_genre: int
    unmapped_labels: dict[str, int]
    skipped_rows: int
    skipped: list[str]
    release: ReleaseCheck | None = None


def benchmark_stats(root: Path, *, strict: bool = False) -> BenchStats:
    """Load the benchmark and its release writings under `root` and summarise them."""
    report = LoadReport()
    items = load_items(root, strict=strict, report=report)
    writings = load_release_writings(root, strict=strict, report=report, items=items)
    stats = summarise(items, writings, data=str(root), report=report)
    return stats.model_copy(update={"release": check_release(root)})


def summarise(items: Sequence[Item], writings: Sequence[Writing], *, data: str, report: LoadReport) -> BenchStats:
    """Pure summary of loaded items and writings (separate from loading so it is easy to test)."""
    tasks = sorted({it.task for it in items}, key=_task_order)
    by_task = {t: [it for it in items if it.task == t] for t in tasks}
    unmapped: dict[str, int] = {}
    for it in items:
        if not is_known_label(it.sub_task):
            unmapped[it.sub_task] = unmapped.get(it.sub_task, 0) + 1
    return BenchStats(
        data=data,
        tasks={**{t: GroupStats.of(v) for t, v in by_task.items()}, ALL: GroupStats.of(items)},
        genres={**{t: _by_genre(v) for t, v in by_task.items()}, ALL: _by_genre(items)},
        models=_model_stats(items, writings),
        unmapped_genre=sum(unmapped.values()),
        unmapped_labels=unmapped,
        skipped_rows=report.skipped,
        skipped=report.summary(),
    )


def _task_order(task: str) -> tuple[int, str]:
    order = ("completion", "guide", "open")
    return (order.index(task) if task in order else len(order), task)


def _by_genre(items: Sequence[Item]) -> dict[str, GroupStats]:
    groups: dict[str, list[Item]] = {}
    for it in items:
        groups.setdefault(it.genre, []).append(it)
    return {g: GroupStats.of(v) for g, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))}


def _model_stats(items: Sequence[Item], writings: Sequence[Writing]) -> dict[str, dict[str, ModelStats]]:
    """Per task, per model. A writing's task is its item's task (release ids are unique across tasks)."""
    task_of = {it.id: it.task for it in items}
    groups: dict[str, dict[str, list[Writing]]] = {}
    for w in writings:
        groups.setdefault(task_of.get(w.item_id, "unknown"), {}).setdefault(w.model, []).append(w)
    out: dict[str, dict[str, ModelStats]] = {}
    for task in sorted(groups, key=_task_order):
        out[task] = {
            model: ModelStats(
                writings=len(ws),
                empty=sum(1 for w in ws if w.is_empty),
                mean_chars=round(statistics.fmean(len(w.output) for w in ws), 1),
            )
            for model, ws in sorted(groups[task].items(), key=lambda kv: kv[0].lower())
        }
    return out
