"""Exported batch files: a ToW judgment of release writings goes export -> an emulated `vllm run-batch` -> import
-> complete judgments, with nothing sent by howtobench and exactly the calls a live run makes; re-asks in a
second round; a second import changes nothing; every bad output file refused naming file and line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fake_run_batch import run_batch
from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.errors import DataError, RowError
from howtobench.llm.batch import body_hash
from howtobench.llm.cache import CallStore
from howtobench.steps.batch_files import FILE_BASE_URL, BatchFiles, FileStore, RoundExported
from howtobench.steps.batch_outputs import same_model
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Execution, Selection
from judge_replies import first_user, judge_reply, leaf_score, schema_of, server_handler

MODEL = "Qwen/Qwen3-8B"
RELEASE = ("deepseek-chat", "gpt-4o-2024-11-20")


def job(bench_root: Path, tmp_path: Path, files: BatchFiles | None, *, base_url: str = FILE_BASE_URL,
        out: str = "tow.jsonl", ws: str = "ws", models: tuple[str, ...] = RELEASE, **kw: Any) -> JudgeJob:
    endpoint = EndpointConfig(model=MODEL, base_urls=(base_url,), max_retries=2)
    return JudgeJob(Selection(data_dir=bench_root, tasks=("guide",), limit=2, models=models),
                    Execution(workspace=tmp_path / ws, progress=False, files=files, **kw), tmp_path / out,
                    endpoint=endpoint)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def exported(judge: JudgeJob) -> str:
    with pytest.raises(RoundExported) as stopped:
        await judge_job(judge)
    return str(stopped.value)


def calls_sent(workspace: Path) -> int:
    store = CallStore.open(workspace)
    try:
        return len(store.rows("SELECT key FROM calls WHERE from_cache = 0 AND purpose != 'preflight'"))
    finally:
        store.close()


async def test_export_run_batch_import_gives_the_live_judgments(bench_root: Path, tmp_path: Path) -> None:
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    said = await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    lines = lines_of(calls)
    assert len(lines) == 2 + 2 * 2 * 7  # one weights call per item, 7 leaves per (item, writing)
    assert all(x["method"] == "POST" and x["url"] == "/v1/chat/completions" and x["body"]["model"] == MODEL
               for x in lines)
    assert [x["custom_id"] for x in lines] == [
        body_hash(json.dumps(x["body"], ensure_ascii=False, separators=(",", ":")).encode()) for x in lines]
    assert f"round 1: 30 calls for model {MODEL} written to {calls} (nothing was sent)" in said
    assert f"vllm run-batch -i {calls} -o {tmp_path / 'calls.out.jsonl'} --model {MODEL}" in said
    assert not (tmp_path / "tow.jsonl").read_text()  # nothing judged yet, nothing failed

    assert run_batch(calls, answers, MODEL, server_handler()) == 30
    report: list[str] = []
    judged = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,)), report=report.append))
    assert [j.status for j in judged] == ["ok"] * 4
    assert report[0] == f"imported 30 answers from {answers}"
    assert calls_sent(tmp_path / "ws") == 30  # each exported call answered once, accounted once

    with FakeServer(server_handler()) as live_server:  # the same replies, live: the same calls and judgments
        live = await judge_job(job(bench_root, tmp_path, None, base_url=live_server.base_url, out="live.jsonl",
                                   ws="live-ws"))
        sent = [json.dumps(r, sort_keys=True) for r in live_server.requests]
    assert sorted(sent) == sorted(json.dumps(x["body"], sort_keys=True) for x in lines)
    assert [(j.item_id, j.model, j.score, j.nodes) for j in judged] == [
        (j.item_id, j.model, j.score, j.nodes) for j in live]

    before = (tmp_path / "tow.jsonl").read_bytes()
    report.clear()
    again = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,)), report=report.append))
    assert report[0] == f"imported 0 answers from {answers} (30 were imported before: nothing changes for them)"
    assert [j.score for j in again] == [j.score for j in judged]
    assert (tmp_path / "tow.jsonl").read_bytes() == before and calls_sent(tmp_path / "ws") == 30


def leaf_of(request: dict[str, Any]) -> str:
    return "weights" if schema_of(request)[0] == "weights" else leaf_score(first_user(request))[0]


async def test_invalid_replies_go_into_a_second_round(bench_root: Path, tmp_path: Path) -> None:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        answer = judge_reply(request)
        is_reask = sum(m["role"] == "user" for m in request["messages"]) > 1
        return {**answer, "score": 42} if leaf_of(request) == "logic" and not is_reask else answer

    calls = tmp_path / "calls.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, tmp_path / "a1.jsonl", MODEL, server_handler(reply))
    said = await exported(job(bench_root, tmp_path, BatchFiles(imports=(tmp_path / "a1.jsonl",))))
    second = tmp_path / "calls.round2.jsonl"
    assert f"round 2: 4 calls for model {MODEL} written to {second}" in said
    reasks = lines_of(second)  # one re-ask per writing, carrying the bad reply and why it was refused
    assert all(json.loads(x["body"]["messages"][-2]["content"])["score"] == 42 for x in reasks)
    assert calls_sent(tmp_path / "ws") == 26  # the 4 logic calls are not complete: not accounted yet
    judged_rows = (tmp_path / "tow.jsonl").read_text()
    assert judged_rows == ""  # every writing waits for its logic leaf

    run_batch(second, tmp_path / "a2.jsonl", MODEL, server_handler(reply))
    judged = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(tmp_path / "a2.jsonl",))))
    assert [j.status for j in judged] == ["ok"] * 4
    assert calls_sent(tmp_path / "ws") == 30  # a re-asked call is one call (two asks), accounted once


async def test_bad_outputs_are_refused_naming_file_and_line(bench_root: Path, tmp_path: Path) -> None:
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, answers, MODEL, server_handler())
    good = answers.read_text().splitlines()

    def importing(rows: list[str], name: str) -> JudgeJob:
        path = tmp_path / name
        path.write_text("\n".join(rows) + "\n")
        return job(bench_root, tmp_path, BatchFiles(imports=(path,)))

    stranger = json.loads(good[0]) | {"custom_id": "f" * 64}
    with pytest.raises(RowError, match=r"unknown.jsonl:2: custom_id ffffffffffff was not exported by judge:"):
        await judge_job(importing([good[0], json.dumps(stranger)], "unknown.jsonl"))
    with pytest.raises(RowError, match=r"twice.jsonl:3: custom_id \w{12} is answered twice \(first at .*:1\)"):
        await judge_job(importing([good[0], good[1], good[0]], "twice.jsonl"))
    other = json.loads(good[1])
    other["response"]["body"]["model"] = "llama-3-8b"
    with pytest.raises(RowError, match=r"model.jsonl:1: the reply .* comes from model 'llama-3-8b', but the call was "
                                       r"exported for 'Qwen/Qwen3-8B'"):
        await judge_job(importing([json.dumps(other)], "model.jsonl"))
    await exported(job(bench_root, tmp_path, BatchFiles(export=tmp_path / "other.jsonl"), out="other.jsonl",
                       models=("deepseek-r1",)))
    ours = {x["custom_id"] for x in lines_of(calls)}
    with pytest.raises(DataError, match=r"foreign.jsonl answers another job's calls: none of its 1 custom_ids was "
                                        r"exported by judge:.*tow.jsonl \(they are judge:.*other.jsonl's\)"):
        foreign = next(x["custom_id"] for x in lines_of(tmp_path / "other.jsonl") if x["custom_id"] not in ours)
        await judge_job(importing([json.dumps(json.loads(good[0]) | {"custom_id": foreign})], "foreign.jsonl"))
    store = FileStore(tmp_path / "ws")
    assert store._db.execute("SELECT COUNT(*) FROM answered").fetchone()[0] == 0  # noqa: SLF001
    store.close()  # nothing of a refused import was stored


async def test_lines_that_are_no_answers_are_never_stored_and_a_later_import_answers_them(
        bench_root: Path, tmp_path: Path) -> None:
    """A refused line (400), a 200 whose body is a string, and a line the engine never ran (500) are reported and
    counted, not stored: the next round holds their calls, and importing the corrected output finishes the job
    (before, the first stored line of a call stayed forever and the job could never finish)."""
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, answers, MODEL, server_handler())
    good = answers.read_text().splitlines()
    bad = [json.loads(line) for line in good[:3]]
    bad[0]["response"] = {"status_code": 400, "request_id": "r", "body": None}
    bad[0]["error"] = "bad request"
    bad[1]["response"]["body"] = "I am a string"
    bad[2]["response"] = {"status_code": 500, "request_id": "r", "body": None}
    bad[2]["error"] = "engine died"
    poisoned = tmp_path / "poisoned.jsonl"
    poisoned.write_text("\n".join([*(json.dumps(b) for b in bad), *good[3:]]) + "\n")
    report: list[str] = []
    said = await exported(job(bench_root, tmp_path, BatchFiles(imports=(poisoned,)), report=report.append))
    assert report[0].startswith(f"{poisoned}:1: custom_id {bad[0]['custom_id'][:12]} is not an answer (refused: "
                                "HTTP 400: bad request)")
    assert report[1].startswith(f"{poisoned}:2: custom_id {bad[1]['custom_id'][:12]} is not an answer (malformed: "
                                "HTTP 200 with a body that is no JSON object (str))")
    assert "(not run: 500: engine died)" in report[2]
    assert report[3].startswith("3 lines are not answers (1 refused, 1 malformed, 1 not run): not stored")
    assert report[4] == f"imported 27 answers from {poisoned}"
    second = tmp_path / "calls.round2.jsonl"
    assert f"round 2: 3 calls for model {MODEL} written to {second}" in said
    assert {x["custom_id"] for x in lines_of(second)} == {b["custom_id"] for b in bad}
    store = FileStore(tmp_path / "ws")
    stored = store._db.execute("SELECT custom_id FROM answered").fetchall()  # noqa: SLF001
    store.close()
    assert len(stored) == 27 and not {b["custom_id"] for b in bad} & {row[0] for row in stored}

    judged = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))  # the corrected output
    assert [j.status for j in judged] == ["ok"] * 4
    assert calls_sent(tmp_path / "ws") == 30  # each call accounted once


async def test_a_prompt_too_long_is_the_writings_failure_and_is_stored(bench_root: Path, tmp_path: Path) -> None:
    """A 400 saying the prompt is too long for the model is a fact about the writing, as live: stored, and the
    writing's judgment fails while the others are judged (docs/fidelity.md)."""
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, answers, MODEL, server_handler())
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    leaf = next(k for k, x in enumerate(lines_of(calls)) if schema_of(x["body"])[0] != "weights")
    rows[leaf]["response"] = {"status_code": 400, "request_id": "r", "body": None}
    rows[leaf]["error"] = "This model's maximum context length is 32768 tokens"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))
    assert sorted(j.status for j in judged) == ["failed", "ok", "ok", "ok"]


async def test_an_import_of_another_selection_is_refused_before_anything_is_stored(
        bench_root: Path, tmp_path: Path) -> None:
    """Exported with --subset, imported without: the same output, another job. Refused naming the difference;
    nothing stored, no round written (before: a "round 2" of every call of the whole selection)."""
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    subset = job(bench_root, tmp_path, BatchFiles(export=calls))
    subset = replace(subset, selection=replace(subset.selection, limit=None, subset=1))
    await exported(subset)
    assert len(lines_of(calls)) == 15  # one item: its weights call and 7 leaves for each of 2 writings
    run_batch(calls, answers, MODEL, server_handler())
    whole = job(bench_root, tmp_path, BatchFiles(imports=(answers,)))
    with pytest.raises(DataError, match=rf"{answers} answer the batch export of another job for judge:.*tow.jsonl "
                                        r"\(limit: none at the export, 2 now; subset: 1 at the export, none now; the "
                                        r"data \(its content digest differs.*\)\); nothing was imported"):
        await judge_job(whole)
    store = FileStore(tmp_path / "ws")
    assert store._db.execute("SELECT COUNT(*) FROM answered").fetchone()[0] == 0  # noqa: SLF001
    store.close()
    assert not (tmp_path / "calls.round2.jsonl").exists()
    judged = await judge_job(replace(subset, execution=whole.execution))  # with the export's selection: taken
    assert [j.status for j in judged] == ["ok"] * 2


async def test_non_utf8_bytes_in_an_output_are_one_line_naming_file_and_line(bench_root: Path,
                                                                              tmp_path: Path) -> None:
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, answers, MODEL, server_handler())
    good = answers.read_bytes()
    answers.write_bytes(good.replace(b"\n", b"\n\xff\xfe", 1))
    with pytest.raises(RowError, match=rf"{answers}:2: not UTF-8 text \(byte 0xff at column 1\)"):
        await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))
    lines = good.decode().splitlines()
    lines[2] = lines[2].replace('"prompt_tokens": ', '"prompt_tokens": NaN, "was": ', 1)
    answers.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowError, match=rf"{answers}:3: not a JSON line of a batch output \(NaN is not JSON"):
        await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))


@pytest.mark.parametrize(("answered", "exported_for", "same"), [
    ("gpt-4o", "gpt-4o", True),
    ("gpt-4o-2024-08-06", "gpt-4o", True),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", True),
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet", True),
    ("gpt-4-0613", "gpt-4", True),
    ("gpt-4o-mini", "gpt-4o", False),
    ("gpt-4o-mini-2024-07-18", "gpt-4o", False),
    ("Qwen2.5-7B-Instruct", "Qwen2.5-7B", False),
    ("Qwen2.5-7B-v2", "Qwen2.5-7B", False),
    ("m-2024-13-01", "m", False),
    ("m-2024-0718", "m", False),
    (None, "m", False),
])
def test_a_reply_is_of_the_exported_model_or_a_dated_snapshot_of_it(answered: str | None, exported_for: str,
                                                                    same: bool) -> None:
    assert same_model(answered, exported_for) is same


async def test_another_models_reply_is_refused_naming_the_rule(bench_root: Path, tmp_path: Path) -> None:
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    await exported(job(bench_root, tmp_path, BatchFiles(export=calls)))
    run_batch(calls, answers, MODEL + "-Instruct", server_handler())
    with pytest.raises(RowError, match=rf"{answers}:1: the reply .* comes from model 'Qwen/Qwen3-8B-Instruct', but "
                                       r"the call was exported for 'Qwen/Qwen3-8B'.*date suffix"):
        await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))


async def test_a_run_goes_round_by_round_writer_then_judge(bench_root: Path, tmp_path: Path) -> None:
    from howtobench.run import RunSettings, run_benchmark

    writer = EndpointConfig(model="my-writer", base_urls=(FILE_BASE_URL,))
    judge = EndpointConfig(model=MODEL, base_urls=(FILE_BASE_URL,))

    def settings(files: BatchFiles) -> RunSettings:
        return RunSettings(name="t", run_dir=tmp_path / "run", selection=Selection(bench_root, ("guide",), limit=2),
                           execution=Execution(workspace=tmp_path / "ws", progress=False, files=files),
                           writer=writer, judge=judge, release=False, bootstrap=50)

    calls = tmp_path / "calls.jsonl"
    with pytest.raises(RoundExported, match="round 1: 2 calls for model my-writer"):
        await run_benchmark(settings(BatchFiles(export=calls)))
    run_batch(calls, tmp_path / "a1.jsonl", "my-writer", server_handler())
    with pytest.raises(RoundExported, match=rf"round 2: 16 calls for model {MODEL}"):  # 2 weights + 2 x 7 leaves
        await run_benchmark(settings(BatchFiles(imports=(tmp_path / "a1.jsonl",))))
    run_batch(tmp_path / "calls.round2.jsonl", tmp_path / "a2.jsonl", MODEL, server_handler())
    result = await run_benchmark(settings(BatchFiles(imports=(tmp_path / "a2.jsonl",))))
    assert result.judgments == 2 and result.failed == 0 and result.generation is not None
    assert (result.generation.written, result.generation.skipped) == (0, 2)  # written by the round before
    assert calls_sent(tmp_path / "ws") == 18
