"""Classify: genres from the model, failures recorded (never guessed), corrections validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from construct_helpers import fake_client

from fake_server import Reply, script
from howtobench.construct.classify import classify, load_genres, pending, request_for
from howtobench.construct.records import Classified, SourceText
from howtobench.construct.workfile import CLASSIFY, INGEST, read_stage
from howtobench.data.genres import GENRES
from howtobench.errors import RowError


def test_request_lists_every_genre_and_delimits_text(build_dir: Path) -> None:
    text = next(iter(read_stage(build_dir / INGEST, SourceText, "text_id").values()))
    req = request_for(text)
    assert req.response_schema is not None
    assert req.response_schema["properties"]["genre"]["enum"] == list(GENRES)
    user = req.messages[1]["content"]
    assert all(f"- {gid}：" in user for gid in GENRES) and "<text>\n" + text.text + "\n</text>" in user


async def test_genres_assigned_and_failures_recorded(fake_server, build_dir: Path, tmp_path: Path) -> None:
    fake_server.handler = script(Reply.json({"reason": "讲市场的一天", "genre": "prose"}),
                                 Reply.json({"reason": "no", "genre": "sonnet"}))  # not in the enum: fails
    async with fake_client(fake_server, tmp_path / "ws") as client:
        report = await classify(build_dir, client)
    rows = list(read_stage(build_dir / CLASSIFY, Classified, "text_id").values())
    assert [r.source for r in rows] == ["site-a", "site-b"]  # ingest order, whatever finished first
    by_source = {r.source: r for r in rows}
    ok_row = by_source["site-a"] if by_source["site-a"].ok else by_source["site-b"]
    bad_row = by_source["site-b"] if ok_row is by_source["site-a"] else by_source["site-a"]
    assert (ok_row.genre, ok_row.reason) == ("prose", "讲市场的一天")
    assert (bad_row.ok, bad_row.genre) == (False, None) and bad_row.error
    assert (report.classified, report.failed, report.by_genre) == (1, 1, {"prose": 1})
    assert [t.text_id for t in pending(build_dir)] == []
    assert [t.text_id for t in pending(build_dir, retry_failed=True)] == [bad_row.text_id]

    fake_server.handler = script(Reply.json({"reason": "r", "genre": "fiction"}))
    async with fake_client(fake_server, tmp_path / "ws") as client:
        await classify(build_dir, client, retry_failed=True)
    assert load_genres(build_dir)[bad_row.text_id].genre == "fiction"
    assert load_genres(build_dir)[ok_row.text_id].genre == "prose"  # done rows are not asked again


def test_corrections_are_validated(build_dir: Path) -> None:
    texts = list(read_stage(build_dir / INGEST, SourceText, "text_id").values())
    rows = [{"text_id": t.text_id, "source": t.source, "language": t.language, "genre": g}
            for t, g in zip(texts, ["letters", "poetry"], strict=True)]
    (build_dir / CLASSIFY).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(RowError, match=r"02_classify.jsonl:2: unknown genre 'poetry'"):
        load_genres(build_dir)


async def test_a_run_level_error_stops_the_step_and_a_rerun_resumes(build_dir: Path) -> None:
    from fake_clients import HANG, FakeClient, reply
    from howtobench.errors import PermanentError

    zh = next(t for t in read_stage(build_dir / INGEST, SourceText, "text_id").values() if t.source == "site-a")
    refused = PermanentError("http://h/v1: HTTP 403")
    client = FakeClient(lambda r: refused if zh.text in r.messages[-1]["content"] else HANG)
    with pytest.raises(PermanentError):
        await classify(build_dir, client)
    assert client.cancelled == 1 and len(pending(build_dir)) == 2  # no row written for either text
    fine = FakeClient(lambda r: reply(data={"reason": "r", "genre": "prose"}))
    assert (await classify(build_dir, fine)).classified == 2
