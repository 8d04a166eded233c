"""`howtobench judge` over the release with the fake server as judge: weights once per item, resume, no-reference."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner
from typer.testing import Result as CliResult

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import app

MODELS = ["gpt-4o-2024-11-20", "deepseek-chat"]


def valid_weights(request: dict) -> Reply:
    """Uniform weights (the default fake reply would break the sum-to-1 rule and be re-asked)."""
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") != "weights":
        return default_handler(request)
    groups = schema["schema"]["properties"]
    return Reply.json({**{g: {leaf: 1 / len(s["required"]) for leaf in s["required"]}
                          for g, s in groups.items() if s.get("type") == "object"}, "explanation": "uniform"})


def run(server: FakeServer, data: Path, tmp_path: Path, *extra: str) -> list[dict]:
    server.handler = valid_weights
    out = tmp_path / "tow.jsonl"
    args = ["judge", "--data", str(data), "--task", "guide", "--limit", "2", "--judge-base-url", server.base_url,
            "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "-o", str(out), "--no-progress"]
    for model in MODELS:
        args += ["--models", model]
    result = CliRunner().invoke(app, args + list(extra))
    assert result.exit_code == 0, result.output + repr(result.exception)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def weights_calls(server: FakeServer) -> int:
    return sum(r.get("response_format", {}).get("json_schema", {}).get("name") == "weights" for r in server.requests)


def test_judge_release_writings_and_resume(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    rows = run(fake_server, bench_root, tmp_path)
    assert len(rows) == 4 and {r["model"] for r in rows} == set(MODELS)
    assert weights_calls(fake_server) == 2  # one per instruction, shared by both models
    assert all(r["method"] == "tow" and r["status"] == "ok" and r["score"] is not None for r in rows)
    assert all(len(r["leaves"]) == 8 and r["tree_hash"] and r["prompt_hash"] for r in rows)
    assert fake_server.requests[0]["messages"] == [{"role": "user", "content": "ping"}]  # the preflight, first
    before = len(fake_server.requests)
    again = run(fake_server, bench_root, tmp_path)
    assert len(again) == 4 and len(fake_server.requests) == before + 1  # resumed: only the preflight was sent


def test_no_reference_sends_no_reference(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    first = json.loads((bench_root / "guide" / "aligned.jsonl").open(encoding="utf-8").readline())
    snippet = first["reference"][:40]
    rows = run(fake_server, bench_root, tmp_path, "--no-reference")
    assert rows and all(r["meta"]["reference"] is False and r["reference_source"] is None for r in rows)
    assert not any(snippet in json.dumps(r["messages"], ensure_ascii=False) for r in fake_server.requests)


def test_unknown_method_is_a_clear_error(tmp_path: Path, bench_root: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--method", "nope", "--task", "guide",
                                      "--limit", "1", "-o", str(tmp_path / "x.jsonl"), "--judge-base-url",
                                      "http://127.0.0.1:9", "--judge-model", "m", "--no-progress"])
    assert result.exit_code == 2 and "unknown judge method 'nope'" in result.output  # caught by the argument check


def test_redo_failed(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    out = tmp_path / "tow.jsonl"
    args = ["judge", "--data", str(bench_root), "--task", "completion", "--limit", "1", "--models", MODELS[0],
            "--judge-base-url", fake_server.base_url, "--judge-model", "fake-judge", "--workspace",
            str(tmp_path / "ws"), "-o", str(out), "--no-progress"]
    fake_server.handler = lambda request: Reply.text("no JSON here")
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 3 and "1 of 1 judgments failed" in first.output  # finished, a failure remains
    [failed] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert failed["status"] == "failed" and failed["score"] is None
    fake_server.handler = valid_weights
    assert CliRunner().invoke(app, args + ["--redo-failed"]).exit_code == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in lines] == ["failed", "ok"]


def leaf_users(server: FakeServer) -> list[str]:
    return [r["messages"][-1]["content"] for r in server.requests
            if r.get("response_format", {}).get("json_schema", {}).get("name") == "leaf_score"]


def test_release_items_are_judged_with_english_prompts_by_default(
    fake_server: FakeServer, tmp_path: Path, bench_root: Path
) -> None:
    """The authors' judge prompts are English for the Chinese release (prompts.yaml): ours too, unless asked."""
    rows = run(fake_server, bench_root, tmp_path)
    users = leaf_users(fake_server)
    assert users and all("[Writing instructions]" in u and "[Criterion:" in u and "【" not in u.split(
        "<<<END WRITING>>>")[1] for u in users)
    assert {r["prompt_language"] for r in rows} == {"en"} and {r["meta"]["language"] for r in rows} == {"zh"}
    english_hash = rows[0]["prompt_hash"]
    fake_server.requests.clear()
    zh = run(fake_server, bench_root, tmp_path / "zh", "--prompt-language", "zh")
    users = leaf_users(fake_server)
    assert users and all("【写作要求】" in u and "【评审项目：" in u for u in users)
    assert {r["prompt_language"] for r in zh} == {"zh"} and zh[0]["prompt_hash"] != english_hash


def test_prompt_language_from_a_config_file(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("prompt_language: zh\n", encoding="utf-8")
    rows = run(fake_server, bench_root, tmp_path, "--config", str(config))
    assert {r["prompt_language"] for r in rows} == {"zh"}
    assert all("【评审项目：" in u for u in leaf_users(fake_server))


def test_prompt_language_is_refused_for_a_method_without_prompts(tmp_path: Path, bench_root: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--method", "bleu", "--task", "guide",
                                      "--limit", "1", "--prompt-language", "zh", "-o", str(tmp_path / "b.jsonl")])
    assert result.exit_code != 0 and "sends no prompt" in result.output + str(result.exception)


B3_MODELS = ["gpt-4o-2024-11-20", "deepseek-chat", "claude-3-5-sonnet-20241022", "o3-mini-2025-01-31"]


def b3_run(server: FakeServer, data: Path, tmp_path: Path, out: Path, *extra: str) -> CliResult:
    server.handler = valid_weights
    args = ["judge", "--data", str(data), "--task", "guide", "--limit", "2", "--judge-base-url", server.base_url,
            "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "-o", str(out), "--no-progress",
            "--no-preflight", *extra]
    for model in B3_MODELS:
        args += ["--models", model]
    return CliRunner().invoke(app, args)


def test_reference_from_a_shipped_model_end_to_end(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    """Appendix B.3: the instructions stay, deepseek-chat's writing is the 6-point reference; its own writings are
    skipped and counted; every judgment records its reference source; meta correlate gives one row per source."""
    human_out, model_out = tmp_path / "human.jsonl", tmp_path / "ds.jsonl"
    assert b3_run(fake_server, bench_root, tmp_path, human_out).exit_code == 0
    fake_server.requests.clear()
    result = b3_run(fake_server, bench_root, tmp_path, model_out, "--reference-from", "deepseek-chat")
    assert result.exit_code == 0, result.output
    assert ("reference from model:deepseek-chat: 2 writings skipped (judged against themselves), 0 skipped"
            in " ".join(result.output.split()))
    rows = [json.loads(line) for line in model_out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6 and {r["model"] for r in rows} == set(B3_MODELS) - {"deepseek-chat"}
    assert {r["reference_source"] for r in rows} == {"model:deepseek-chat"}
    items = {json.loads(x)["infer_id"] for x in (bench_root / "guide" / "aligned.jsonl").read_text("utf-8")
             .splitlines()[:2]}
    theirs = {json.loads(x)["infer_id"]: json.loads(x)["output"] for x in (bench_root / "guide" / "inferences" /
              "deepseek-chat.jsonl").read_text("utf-8").splitlines() if json.loads(x)["infer_id"] in items}
    users = leaf_users(fake_server)
    assert users and all(any(f"<<<REFERENCE>>>\n{text}\n<<<END REFERENCE>>>" in u for text in theirs.values())
                         for u in users if "<<<REFERENCE>>>" in u)
    assert {json.loads(x)["reference_source"] for x in human_out.read_text("utf-8").splitlines()} == {"human"}
    ratings = tmp_path / "ratings.jsonl"
    ratings.write_text("".join(json.dumps({"item_id": r["item_id"], "model": m, "rater": "r", "score": 1 + k})
                               + "\n" for r in rows for k, m in enumerate(B3_MODELS)), encoding="utf-8")
    table = CliRunner().invoke(app, ["meta", "correlate", str(human_out), str(model_out), "--human", str(ratings),
                                     "--format", "json", "--bootstrap", "20"])
    assert table.exit_code == 0, table.output
    methods = {row["Method"] for block in json.loads(table.stdout) for row in block["rows"]}
    assert methods == {"tow", "tow (reference model:deepseek-chat)"}


def test_reference_from_a_writings_file(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    first = [json.loads(x) for x in (bench_root / "guide" / "aligned.jsonl").read_text("utf-8").splitlines()[:2]]
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"infer_id": first[0]["infer_id"], "model": "mine", "output": "我的参考文。"},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "file.jsonl"
    result = b3_run(fake_server, bench_root, tmp_path, out, "--reference-from", str(refs))
    assert result.exit_code == 0, result.output
    assert "0 writings skipped (judged against themselves), 4 skipped (no reference" in " ".join(result.output.split())
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and {r["reference_source"] for r in rows} == {"file:refs.jsonl"}
    assert all("<<<REFERENCE>>>\n我的参考文。\n<<<END REFERENCE>>>" in u for u in leaf_users(fake_server)
               if "<<<REFERENCE>>>" in u)


def test_reference_from_an_unknown_model_is_a_clear_error(tmp_path: Path, bench_root: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "1",
                                      "--method", "bleu", "-o", str(tmp_path / "b.jsonl"), "--reference-from",
                                      "deepseek-chatt"])
    assert result.exit_code != 0
    assert "unknown shipped model 'deepseek-chatt' (did you mean 'deepseek-chat'?)" in result.output + str(
        result.exception)
