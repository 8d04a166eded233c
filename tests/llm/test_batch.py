"""Batch mode against a fake batch API on loopback: judgments equal to live ones, re-asks in a follow-up batch,
an expired and a partly failed batch, a batch that fails whole, cost at the batch rate, generate --batch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_batch_server import FakeBatchServer
from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.errors import PermanentError, is_run_level
from howtobench.llm.accounting import load_prices, price_for
from howtobench.llm.batch import BatchSettings, BatchStore
from howtobench.llm.cache import CallStore
from howtobench.llm.types import ChatRequest
from howtobench.steps.client import batch_client
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Execution, Selection
from judge_replies import first_user, judge_reply, leaf_score, schema_of, server_handler

FAST = BatchSettings(poll_s=0.02, quiet_s=0.15)
MODEL = "gpt-4o-2024-11-20"
RELEASE_MODEL = "deepseek-chat"


@pytest.fixture
def batch_server() -> Iterator[FakeBatchServer]:
    with FakeBatchServer(server_handler(), polls=2) as server:
        yield server


def job(bench_root: Path, tmp_path: Path, base_url: str, batch: BatchSettings | None = FAST,
        out: str = "tow.jsonl", **kw: Any) -> JudgeJob:
    endpoint = EndpointConfig(model=MODEL, base_urls=(base_url,), max_retries=3)
    return JudgeJob(Selection(data_dir=bench_root, tasks=("guide",), limit=3, models=(RELEASE_MODEL,)),
                    Execution(workspace=tmp_path / "ws", progress=False, batch=batch, **kw), tmp_path / out,
                    endpoint=endpoint)


def leaf_of(request: dict[str, Any]) -> str:
    """The leaf a judge call scores ("weights" for the negotiator)."""
    return "weights" if schema_of(request)[0] == "weights" else leaf_score(first_user(request))[0]


def body_lines(upload: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in upload.decode().splitlines()]


async def test_batch_judgments_equal_live_ones_at_the_batch_rate(
        batch_server: FakeBatchServer, bench_root: Path, tmp_path: Path) -> None:
    report: list[str] = []
    batched = await judge_job(job(bench_root, tmp_path, batch_server.base_url, report=report.append))
    assert [j.status for j in batched] == ["ok"] * 3
    assert len(batch_server.created) == 1  # 3 weight calls + 3 x 7 leaf calls in one batch file
    [lines] = [body_lines(u) for u in batch_server.uploads]
    assert len(lines) == 24 and {x["url"] for x in lines} == {"/v1/chat/completions"}
    assert all(x["method"] == "POST" and x["body"]["model"] == MODEL for x in lines)
    assert any("submitted 24 requests" in r for r in report) and any("completed, 24/24 done" in r for r in report)
    stored = BatchStore(tmp_path / "ws").folder / f"{batch_server.created[0]}.json"
    assert json.loads(stored.read_text())["consumed"] is True

    with FakeServer(server_handler()) as live_server:  # the same replies, live
        live = await judge_job(job(bench_root, tmp_path / "live", live_server.base_url, batch=None))
    assert [(j.item_id, j.score, j.nodes) for j in batched] == [(j.item_id, j.score, j.nodes) for j in live]

    price = price_for(MODEL, load_prices())
    assert price is not None and price.batch == 0.5
    store = CallStore.open(tmp_path / "ws")
    try:
        rows = store.rows("SELECT prompt_tokens AS p, completion_tokens AS c, cost_usd FROM calls WHERE from_cache = 0")
    finally:
        store.close()
    assert len(rows) == 24
    for row in rows:
        assert row["cost_usd"] == pytest.approx(price.cost(row["p"], row["c"]) / 2)

    again = await judge_job(job(bench_root, tmp_path, batch_server.base_url, out="again.jsonl"))
    assert [j.score for j in again] == [j.score for j in batched] and len(batch_server.created) == 1  # all cached


async def test_invalid_replies_are_re_asked_in_a_follow_up_batch(bench_root: Path, tmp_path: Path) -> None:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        answer = judge_reply(request)
        is_reask = sum(m["role"] == "user" for m in request["messages"]) > 1
        if leaf_of(request) == "logic" and not is_reask:
            return {**answer, "score": 42}
        return answer

    with FakeBatchServer(server_handler(reply), polls=1) as server:
        judged = await judge_job(job(bench_root, tmp_path, server.base_url))
    assert [j.status for j in judged] == ["ok"] * 3
    assert len(server.created) == 2
    follow_up = body_lines(server.uploads[1])
    assert len(follow_up) == 3  # one re-ask per writing, carrying the bad reply and why it was refused
    for line in follow_up:
        messages = line["body"]["messages"]
        assert json.loads(messages[-2]["content"])["score"] == 42 and "42" in messages[-1]["content"]
        assert first_user(line["body"]) == messages[1]["content"]


async def test_an_expired_batch_sends_what_did_not_run_in_a_new_batch(
        batch_server: FakeBatchServer, bench_root: Path, tmp_path: Path) -> None:
    batch_server.outcomes = ["expired:10"]
    judged = await judge_job(job(bench_root, tmp_path, batch_server.base_url))
    assert [j.status for j in judged] == ["ok"] * 3
    assert len(batch_server.created) == 2
    first, second = (body_lines(u) for u in batch_server.uploads)
    assert len(first) == 24 and len(second) == 14  # the 14 the expired batch never ran, nothing twice
    assert {x["custom_id"] for x in second} == {x["custom_id"] for x in first[10:]}
    assert len(batch_server.ran) == 24


async def test_a_partly_failed_batch_records_request_errors_like_live_ones(
        bench_root: Path, tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def reply(request: dict[str, Any]) -> Reply:
        answer = judge_reply(request)
        leaf = leaf_of(request)
        seen[leaf] = seen.get(leaf, 0) + 1
        if leaf == "emotion" and seen[leaf] == 1:  # one writing's emotion leaf: too long for the context
            return Reply.error(400, "This model's maximum context length is 128000 tokens. However, your "
                                    "messages resulted in 190000 tokens.")
        if leaf == "language" and seen[leaf] <= 3:  # every language leaf: a server error, once
            return Reply.server_error(500)
        return Reply.json(answer)

    with FakeBatchServer(reply, polls=1) as server:
        judged = await judge_job(job(bench_root, tmp_path, server.base_url))
    failed = [j for j in judged if j.status == "failed"]
    assert len(failed) == 1 and [j.status for j in judged].count("ok") == 2
    [leaf] = [x for x in failed[0].leaves if x.status == "failed"]
    assert leaf.name == "emotion" and "context" in (leaf.error or "")
    assert len(server.created) == 2 and len(body_lines(server.uploads[1])) == 3  # the 500s, retried once
    assert all(x.score is not None for j in judged for x in j.leaves if x.name == "language")


async def test_a_batch_that_fails_whole_raises_a_run_level_error(
        batch_server: FakeBatchServer, tmp_path: Path) -> None:
    batch_server.outcomes = ["failed"]
    endpoint = EndpointConfig(model=MODEL, base_urls=(batch_server.base_url,))
    request = ChatRequest(messages=({"role": "user", "content": "写一首诗"},), purpose="generation")
    async with batch_client(endpoint, workspace=tmp_path, settings=FAST) as client:
        with pytest.raises(PermanentError, match="failed as a whole: scripted failure") as caught:
            await client.chat(request)
    assert is_run_level(caught.value)
    [record] = BatchStore(tmp_path).folder.glob("*.json")
    assert json.loads(record.read_text())["status"] == "failed"  # a later run does not wait for it again


async def test_a_failed_batch_stops_the_judge_run_without_a_row(
        batch_server: FakeBatchServer, bench_root: Path, tmp_path: Path) -> None:
    batch_server.outcomes = ["failed"]
    with pytest.raises(PermanentError, match="failed as a whole"):
        await judge_job(job(bench_root, tmp_path, batch_server.base_url))
    out = tmp_path / "tow.jsonl"
    assert not out.exists() or not out.read_text().strip()


async def test_a_refused_batch_api_names_the_status_never_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATCH_KEY", "sk-secret-123")
    with FakeServer() as plain:  # answers 404 on /files: no batch API there
        endpoint = EndpointConfig(model=MODEL, base_urls=(plain.base_url,), api_key_env="BATCH_KEY")
        request = ChatRequest(messages=({"role": "user", "content": "x"},))
        async with batch_client(endpoint, workspace=tmp_path, settings=FAST) as client:
            with pytest.raises(PermanentError, match="/files answered HTTP 404") as caught:
                await client.chat(request)
    assert "sk-secret-123" not in str(caught.value)
    assert any(r.headers.get("authorization") == "Bearer sk-secret-123" for r in plain.log)


async def test_max_cost_submits_only_what_fits_and_a_rerun_finishes(bench_root: Path, tmp_path: Path) -> None:
    """--max-cost under --batch for a judge run: each request is priced at its bound (input $0, output $10 / M at
    half price: max_tokens x $5 / M) before it is submitted, every reply is billed at that bound, and the run stops
    when not one more request fits; the re-run submits only the rest."""
    from howtobench.errors import BudgetExceeded
    from howtobench.llm.budget import spending_limit

    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{MODEL}: {{input: 0.0, output: 10.0, batch: 0.5}}\n", encoding="utf-8")
    answer = server_handler()

    def at_the_bound(request: dict[str, Any]) -> Reply:
        reply = answer(request)
        reply.usage = {"prompt_tokens": 0, "completion_tokens": request["max_tokens"]}
        return reply

    def bound(line: dict[str, Any]) -> float:
        return float(line["body"]["max_tokens"]) * 5e-6

    with FakeBatchServer(at_the_bound, polls=1) as server:
        limit = 10.5 * 4096 * 5e-6  # room for ten requests of 4,096 tokens
        with spending_limit(limit), pytest.raises(BudgetExceeded, match="requests not submitted"):
            await judge_job(job(bench_root, tmp_path, server.base_url, prices=prices))
        first = [line for upload in server.uploads for line in body_lines(upload)]
        assert sum(bound(line) for line in first) <= limit < sum(bound(line) for line in first) + 4096 * 5e-6
        written = [json.loads(row) for row in (tmp_path / "tow.jsonl").read_text().splitlines() if row.strip()]
        assert all(row["status"] == "ok" for row in written) and len(written) < 3
        judged = await judge_job(job(bench_root, tmp_path, server.base_url, prices=prices))
    assert [j.status for j in judged] == ["ok"] * 3
    every = [line for upload in server.uploads for line in body_lines(upload)]
    assert len(every) == 24 and len({line["custom_id"] for line in every}) == 24  # nothing submitted twice


async def test_the_batch_api_uses_the_toolkits_one_session_factory(
        batch_server: FakeBatchServer, bench_root: Path, tmp_path: Path) -> None:
    """The batch API opened its own aiohttp session (aiohttp's User-Agent, its own proxy lookup); it now takes
    `howtobench.http.new_session` like model calls, the download and health checks (issue 25 point 3)."""
    await judge_job(job(bench_root, tmp_path, batch_server.base_url))
    assert batch_server.user_agents == ["howtobench"]
