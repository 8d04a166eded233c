"""Step 4 (paper 4.4-4.5): turn each kept text into Completion, Guide and Open items.

Every kept text yields one item per requested task, all sharing the text's id as `bench_id` (the same
reference seen at three levels of guidance) — or, with `split`, one item for one task drawn per text, so each
reference appears once, as in the release. Completion needs no model (completion.py); Guide and Open share
one back-construction call per text: Guide gets S and T in the instruction and G as information, Open gets
S and T only. Items whose making failed are written with `ok=false` and the reason, and are left out of the
review file. Re-running skips texts whose items are all present (failed ones too, unless `retry_failed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from howtobench.construct import prompts
from howtobench.construct.backconstruct import BackConstruction, back_construct
from howtobench.construct.backconstruct import request_for as back_request
from howtobench.construct.calls import quiet_loop, run_stage
from howtobench.construct.completion import BLANK, blank_out, rng_for
from howtobench.construct.quality import kept_texts
from howtobench.construct.records import DraftItem, SourceText
from howtobench.construct.workfile import INGEST, ITEMS, read_existing, read_stage, write_rows
from howtobench.data.models import TASKS, Language, Task
from howtobench.errors import ConfigError
from howtobench.llm.types import ChatRequest, LLMClient
from howtobench.runloop import LoopSettings

_END = ("。", "！", "？", ".", "!", "?", "”", "\"")


@dataclass
class MakeReport:
    made: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def item_id(text_id: str, task: str) -> str:
    return f"{text_id}-{task}"


def _sentence(summary: str, language: Language) -> str:
    """The summary ending with a full stop, so it reads as a sentence inside the instruction."""
    return summary if summary.endswith(_END) else summary + ("。" if language == "zh" else ".")


def _base(text: SourceText, genre: str, task: str) -> DraftItem:
    return DraftItem(item_id=item_id(text.text_id, task), bench_id=text.text_id, text_id=text.text_id,
                     task=cast(Task, task),
                     genre=genre, language=text.language, source=text.source, license=text.license)


def completion_item(text: SourceText, genre: str, seed: int) -> DraftItem:
    item = _base(text, genre, "completion")
    try:
        blanked = blank_out(text.text, rng_for(seed, text.text_id))
    except ValueError as exc:
        return item.model_copy(update={"error": str(exc)})
    instruction = prompts.instruction_template("completion", text.language).format(marker=BLANK)
    return item.model_copy(update={"ok": True, "instruction": instruction, "information": blanked.information,
                                   "reference": blanked.reference})


def written_item(text: SourceText, genre: str, task: str, back: BackConstruction) -> DraftItem:
    """A Guide or Open item composed from the back-construction with our instruction templates."""
    lang = text.language
    instruction = prompts.instruction_template(task, lang).format(
        genre=prompts.genre_label(genre, lang), theme=back.theme, summary=_sentence(back.summary, lang))
    sep = "：" if lang == "zh" else ": "
    information = "\n".join(f"- {trait}{sep}{req}" for trait, req in back.information) if task == "guide" else ""
    return _base(text, genre, task).model_copy(update={
        "ok": True, "instruction": instruction, "information": information, "reference": text.text,
        "summary": back.summary, "theme": back.theme})


def tasks_for(text_id: str, tasks: tuple[str, ...], *, split: bool, seed: int) -> tuple[str, ...]:
    """The tasks one text is made into: all of them, or (split) one, chosen by a seeded draw per text.

    Split gives disjoint references per task, as in the release; the draw depends only on (seed, text), so
    adding texts later does not move earlier ones to another task.
    """
    if not split or len(tasks) == 1:
        return tasks
    return (tasks[int(rng_for(seed + 1, text_id).integers(len(tasks)))],)


def pending(build_dir: Path, tasks: tuple[str, ...], *, retry_failed: bool = False, split: bool = False,
            seed: int = 0) -> list[tuple[SourceText, str, tuple[str, ...]]]:
    """(text, genre, its tasks) for kept texts with an item missing (or failed, when `retry_failed`)."""
    done = read_existing(build_dir / ITEMS, DraftItem, "item_id")
    todo = []
    for text, rated in kept_texts(build_dir):
        mine = tasks_for(text.text_id, tasks, split=split, seed=seed)
        rows = [done.get(item_id(text.text_id, t)) for t in mine]
        if any(r is None or (retry_failed and not r.ok) for r in rows):
            todo.append((text, rated.genre, mine))
    return todo


def planned_requests(build_dir: Path, tasks: tuple[str, ...], *, retry_failed: bool = False, split: bool = False,
                     seed: int = 0) -> list[ChatRequest]:
    """The back-construction calls a run would make (for --dry-run cost estimates)."""
    jobs = pending(build_dir, tasks, retry_failed=retry_failed, split=split, seed=seed)
    return [back_request(text, genre) for text, genre, mine in jobs if {"guide", "open"} & set(mine)]


async def make_text(client: LLMClient | None, text: SourceText, genre: str, tasks: tuple[str, ...], seed: int
                    ) -> list[DraftItem]:
    items = [completion_item(text, genre, seed)] if "completion" in tasks else []
    written = [t for t in tasks if t in ("guide", "open")]
    if written:
        if client is None:
            raise ConfigError("guide and open items need a model endpoint for back-construction")
        back, error = await back_construct(client, text, genre)
        for task in written:
            items.append(written_item(text, genre, task, back) if back else
                         _base(text, genre, task).model_copy(update={"error": error}))
    return items


async def make(build_dir: Path, client: LLMClient | None, *, tasks: tuple[str, ...] = TASKS, seed: int = 0,
               retry_failed: bool = False, split: bool = False, loop: LoopSettings | None = None) -> MakeReport:
    """Make the items of every pending kept text, then rewrite 04_items.jsonl in ingest and task order (`loop`: as
    for `classify.classify`; a text is one unit, failed when any of its items failed)."""
    unknown = set(tasks) - set(TASKS)
    if unknown:
        raise ConfigError(f"unknown task(s) {sorted(unknown)}; choose from {', '.join(TASKS)}")
    path = build_dir / ITEMS

    async def work(job: tuple[SourceText, str, tuple[str, ...]]) -> list[DraftItem]:
        return await make_text(client, *job, seed)

    todo = pending(build_dir, tasks, retry_failed=retry_failed, split=split, seed=seed)
    await run_stage(path, todo, work, loop or quiet_loop("make"))
    rows = read_stage(path, DraftItem, "item_id")
    order = [item_id(tid, t) for tid in read_stage(build_dir / INGEST, SourceText, "text_id")
             for t in TASKS]
    final = [rows[i] for i in order if i in rows]
    write_rows(path, final)
    report = MakeReport()
    for row in final:
        bucket = report.made if row.ok else report.failed
        bucket[row.task] = bucket.get(row.task, 0) + 1
        if not row.ok:
            report.errors.append(f"{row.item_id}: {row.error}")
    return report
