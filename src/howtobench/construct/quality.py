"""Step 3 (paper 4.3, App. E): a coarse, genre-specific quality score 1-5; keep texts at or above a threshold.

Each classified text is scored against the rubric of its (possibly hand-corrected) genre, in its own
language. The score is an enum 1..5 in the reply schema. `kept` is recomputed from the threshold every time
the step runs, so changing `--min-quality` needs no new calls. A failed call keeps `score=null`, is never
kept, and is shown in its own column of the per-source table (the shape of the paper's Table 13).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from howtobench.construct import prompts
from howtobench.construct.calls import ask, json_object, quiet_loop, run_stage
from howtobench.construct.classify import load_genres
from howtobench.construct.records import Classified, Rated, SourceText
from howtobench.construct.workfile import FILTER, INGEST, read_existing, read_stage, write_rows
from howtobench.llm.types import ChatRequest, LLMClient, SamplingParams
from howtobench.runloop import LoopSettings

DEFAULT_THRESHOLD = 4  # the paper's choice (4.3)
SCORES = (1, 2, 3, 4, 5)


@dataclass
class ScoreTable:
    """Per source: how many texts got each score, failed, and were kept."""

    threshold: int
    counts: dict[str, dict[int, int]] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    unclassified: int = 0

    def total(self, source: str) -> int:
        return sum(self.counts.get(source, {}).values()) + self.failed.get(source, 0)


def schema() -> dict[str, object]:
    return json_object({"reason": {"type": "string"}, "score": {"type": "integer", "enum": list(SCORES)}})


def request_for(text: SourceText, genre: str) -> ChatRequest:
    rubric = prompts.genre_knowledge(genre)["rubric"][text.language]
    rendered = prompts.render("quality", text.language, genre_label=prompts.genre_label(genre, text.language),
                              rubric=rubric, text=text.text)
    return ChatRequest(messages=rendered.messages, sampling=SamplingParams(temperature=0.0, max_tokens=300),
                       response_schema=schema(), schema_name="quality", purpose="build:filter",
                       template_version=rendered.version)


def pending(build_dir: Path, *, retry_failed: bool = False) -> list[tuple[SourceText, str]]:
    """(text, genre) pairs with a genre and no score yet; a changed genre is scored again."""
    texts = read_stage(build_dir / INGEST, SourceText, "text_id")
    genres = load_genres(build_dir)
    done = read_existing(build_dir / FILTER, Rated, "text_id")
    todo = []
    for tid, cls in genres.items():
        if cls.genre is None or tid not in texts:
            continue
        old = done.get(tid)
        if old is None or old.genre != cls.genre or (retry_failed and old.score is None):
            todo.append((texts[tid], cls.genre))
    return todo


async def rate_one(client: LLMClient, text: SourceText, genre: str) -> Rated:
    data, error = await ask(client, request_for(text, genre), _check)
    row = Rated(text_id=text.text_id, source=text.source, genre=genre, language=text.language)
    if data is None:
        return row.model_copy(update={"error": error})
    return row.model_copy(update={"ok": True, "score": int(data["score"]), "reason": str(data["reason"]).strip()})


def _check(data: dict[str, object]) -> str | None:
    return None if data.get("score") in SCORES else "score must be an integer from 1 to 5"


async def rate(build_dir: Path, client: LLMClient, *, threshold: int = DEFAULT_THRESHOLD, retry_failed: bool = False,
               loop: LoopSettings | None = None) -> ScoreTable:
    """Score every pending text, then rewrite the stage file with `kept` set from `threshold` (`loop`: as for
    `classify.classify`)."""
    todo = pending(build_dir, retry_failed=retry_failed)

    async def work(job: tuple[SourceText, str]) -> Rated:
        return await rate_one(client, *job)

    await run_stage(build_dir / FILTER, todo, work, loop or quiet_loop("filter"))
    return apply_threshold(build_dir, threshold)


def apply_threshold(build_dir: Path, threshold: int) -> ScoreTable:
    """Set `kept` (score >= threshold, same genre as the classification) and rewrite in ingest order."""
    if threshold not in SCORES:
        raise ValueError(f"threshold must be one of {SCORES}, not {threshold}")
    order = read_stage(build_dir / INGEST, SourceText, "text_id")
    genres: dict[str, Classified] = load_genres(build_dir)
    rows = read_existing(build_dir / FILTER, Rated, "text_id")
    final = []
    for tid in order:
        row = rows.get(tid)
        if row is None or genres.get(tid) is None or genres[tid].genre != row.genre:
            continue  # not scored yet, or scored under a genre the user has since corrected
        final.append(row.model_copy(update={"kept": row.score is not None and row.score >= threshold}))
    write_rows(build_dir / FILTER, final)
    table = score_table(final, threshold)
    table.unclassified = sum(1 for c in genres.values() if c.genre is None)
    return table


def score_table(rows: list[Rated], threshold: int) -> ScoreTable:
    table = ScoreTable(threshold=threshold)
    for row in rows:
        if row.score is None:
            table.failed[row.source] = table.failed.get(row.source, 0) + 1
        else:
            counts = table.counts.setdefault(row.source, dict.fromkeys(SCORES, 0))
            counts[row.score] += 1
        table.counts.setdefault(row.source, dict.fromkeys(SCORES, 0))
        table.kept[row.source] = table.kept.get(row.source, 0) + int(row.kept)
    return table


def kept_texts(build_dir: Path) -> list[tuple[SourceText, Rated]]:
    """The texts that passed the filter, with their rating row, in ingest order."""
    texts = read_stage(build_dir / INGEST, SourceText, "text_id")
    rated = read_stage(build_dir / FILTER, Rated, "text_id")
    return [(texts[tid], row) for tid, row in rated.items() if row.kept and tid in texts]
