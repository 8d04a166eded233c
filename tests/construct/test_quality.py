"""Quality filter: genre rubric in the prompt, threshold applied, failures counted, Table-13 shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from construct_helpers import fake_client

from fake_server import Reply
from howtobench.construct import prompts
from howtobench.construct.quality import apply_threshold, kept_texts, pending, rate
from howtobench.construct.records import Classified, SourceText
from howtobench.construct.workfile import CLASSIFY, INGEST, read_stage, write_rows


def _classify(build_dir: Path, genres: dict[str, str | None]) -> None:
    texts = read_stage(build_dir / INGEST, SourceText, "text_id").values()
    write_rows(build_dir / CLASSIFY, [
        Classified(text_id=t.text_id, source=t.source, language=t.language, genre=genres[t.source],
                   ok=genres[t.source] is not None) for t in texts])


def _by_content(req: dict[str, Any]) -> Reply:
    user = req["messages"][-1]["content"]
    if "lighthouse" in user:
        return Reply.json({"reason": "vivid", "score": 5})
    return Reply.json({"reason": "plain", "score": 3})


async def test_threshold_and_table(fake_server, build_dir: Path, tmp_path: Path) -> None:
    _classify(build_dir, {"site-a": "prose", "site-b": "fiction"})
    fake_server.handler = _by_content
    async with fake_client(fake_server, tmp_path / "ws") as client:
        table = await rate(build_dir, client)
    # the prompt carries the rubric of the text's genre, in the text's language
    prose_rubric = prompts.genre_knowledge("prose")["rubric"]["zh"]
    zh_prompt = next(r for r in fake_server.requests if "菜市场" in r["messages"][-1]["content"])
    assert all(c in zh_prompt["messages"][-1]["content"] for c in prose_rubric)
    assert table.counts == {"site-a": {1: 0, 2: 0, 3: 1, 4: 0, 5: 0}, "site-b": {1: 0, 2: 0, 3: 0, 4: 0, 5: 1}}
    assert table.kept == {"site-a": 0, "site-b": 1}
    assert [t.source for t, _ in kept_texts(build_dir)] == ["site-b"]
    calls = len(fake_server.requests)
    table3 = apply_threshold(build_dir, 3)  # a lower threshold needs no new calls
    assert table3.kept == {"site-a": 1, "site-b": 1} and len(fake_server.requests) == calls


async def test_failures_and_corrected_genres(fake_server, build_dir: Path, tmp_path: Path) -> None:
    _classify(build_dir, {"site-a": "prose", "site-b": None})  # site-b's classification failed: skipped
    fake_server.handler = lambda req: Reply.json({"reason": "x", "score": 9})  # out of the enum: a failure
    async with fake_client(fake_server, tmp_path / "ws") as client:
        table = await rate(build_dir, client)
    assert table.failed == {"site-a": 1} and table.kept == {"site-a": 0} and table.unclassified == 1
    assert pending(build_dir) == []
    assert [t.source for t, _ in pending(build_dir, retry_failed=True)] == ["site-a"]
    # the user corrects the genre of site-a in the classify file: it is scored again under the new genre
    rows = [json.loads(line) for line in (build_dir / CLASSIFY).read_text(encoding="utf-8").splitlines()]
    rows[0]["genre"] = "documentary"
    (build_dir / CLASSIFY).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [(t.source, g) for t, g in pending(build_dir)] == [("site-a", "documentary")]
