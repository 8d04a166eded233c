"""Step 2 (paper 4.3, App. D): an LLM assigns each text one genre of our mapping, with a short reason.

The result, `02_classify.jsonl`, is meant to be read and corrected by a person before the next step: change
a row's `genre` to any genre id of `howtobench.data.genres.GENRES` (also for a row whose call failed). The
next step reads the edited file and rejects an unknown genre with file and line. A failed call is a row with
`ok=false`, `genre=null` and the error; it is never given a guessed genre, and the filter step skips it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from howtobench.construct import prompts
from howtobench.construct.calls import ask, json_object, quiet_loop, run_stage
from howtobench.construct.records import Classified, SourceText
from howtobench.construct.workfile import (
    CLASSIFY,
    INGEST,
    iter_rows,
    read_existing,
    read_stage,
    write_rows,
)
from howtobench.data.genres import GENRES
from howtobench.errors import RowError
from howtobench.llm.types import ChatRequest, LLMClient, SamplingParams
from howtobench.runloop import LoopSettings

PREVIEW_CHARS = 160


@dataclass
class ClassifyReport:
    done_before: int = 0
    classified: int = 0
    failed: int = 0
    by_genre: dict[str, int] = field(default_factory=dict)


def schema() -> dict[str, object]:
    """Reason first (the model explains, then decides); genre as an enum so grammar servers cannot stray."""
    return json_object({"reason": {"type": "string"}, "genre": {"type": "string", "enum": list(GENRES)}})


def request_for(text: SourceText) -> ChatRequest:
    genres = [{"id": gid, "desc": prompts.genre_knowledge(gid)["desc"][text.language]} for gid in GENRES]
    rendered = prompts.render("classify", text.language, genres=genres, text=text.text)
    return ChatRequest(messages=rendered.messages, sampling=SamplingParams(temperature=0.0, max_tokens=300),
                       response_schema=schema(), schema_name="genre", purpose="build:classify",
                       template_version=rendered.version)


def pending(build_dir: Path, *, retry_failed: bool = False) -> list[SourceText]:
    """Texts without a classification row yet (and failed ones when `retry_failed`)."""
    texts = read_stage(build_dir / INGEST, SourceText, "text_id")
    done = read_existing(build_dir / CLASSIFY, Classified, "text_id")
    return [t for tid, t in texts.items() if tid not in done or (retry_failed and done[tid].genre is None)]


async def classify_one(client: LLMClient, text: SourceText) -> Classified:
    data, error = await ask(client, request_for(text), _check)
    row = Classified(text_id=text.text_id, source=text.source, language=text.language,
                     preview=text.text[:PREVIEW_CHARS])
    if data is None:
        return row.model_copy(update={"error": error})
    return row.model_copy(update={"ok": True, "genre": data["genre"], "reason": str(data["reason"]).strip()})


def _check(data: dict[str, object]) -> str | None:
    return None if data.get("genre") in GENRES else f"genre must be one of {', '.join(GENRES)}"


async def classify(build_dir: Path, client: LLMClient, *, retry_failed: bool = False,
                   loop: LoopSettings | None = None) -> ClassifyReport:
    """Classify every pending text, appending rows as they finish, then rewrite the file in ingest order.

    `loop`: the runner loop's bar, writings in flight and failed-share limit (default: no bar, no limit)."""
    todo = pending(build_dir, retry_failed=retry_failed)
    path = build_dir / CLASSIFY

    async def work(text: SourceText) -> Classified:
        return await classify_one(client, text)

    await run_stage(path, todo, work, loop or quiet_loop("classify"))
    order = read_stage(build_dir / INGEST, SourceText, "text_id")
    rows = read_stage(path, Classified, "text_id")
    write_rows(path, [rows[tid] for tid in order if tid in rows])
    report = ClassifyReport(done_before=len(order) - len(todo))
    for row in rows.values():
        if row.genre is None:
            report.failed += 1
        else:
            report.classified += 1
            report.by_genre[row.genre] = report.by_genre.get(row.genre, 0) + 1
    return report


def load_genres(build_dir: Path) -> dict[str, Classified]:
    """The (possibly hand-edited) classification rows; an unknown genre is an error naming file and line."""
    path = build_dir / CLASSIFY
    rows: dict[str, Classified] = {}
    for line, row in iter_rows(path, Classified):
        if row.genre is not None and row.genre not in GENRES:
            raise RowError(path, line, f"unknown genre {row.genre!r}; use one of: {', '.join(GENRES)}")
        rows[row.text_id] = row
    return rows
