"""`--dry-run` of judge, generate and run: the counted calls equal the calls a real run makes, and nothing is sent
or written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import app
from howtobench.llm.dryrun import NOT_SENT, RecordingClient
from howtobench.llm.types import ChatRequest

MODELS = ["gpt-4o-2024-11-20", "deepseek-chat"]


def valid_weights(request: dict[str, Any]) -> Reply:
    """Uniform weights, so the real run makes no re-ask (a dry run cannot know about re-asks)."""
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") != "weights":
        return default_handler(request)
    groups = schema["schema"]["properties"]
    return Reply.json({**{g: {leaf: 1 / len(s["required"]) for leaf in s["required"]}
                          for g, s in groups.items() if s.get("type") == "object"}, "explanation": "uniform"})


def invoke(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def counted(output: str, label: str = "total") -> int:
    """The calls of the first `label` row of the dry-run table."""
    match = re.search(rf"^\s*{label}\s+([\d,]+) calls?\b", output, re.MULTILINE)  # "1 call", "2 calls"
    assert match, output
    return int(match.group(1).replace(",", ""))


async def test_recording_client_records_and_never_answers() -> None:
    client = RecordingClient("m")
    request = ChatRequest(messages=({"role": "user", "content": "hi"},), purpose="x")
    result = await client.chat(request)
    assert not result.ok and result.error == NOT_SENT and result.text is None and result.data is None
    assert client.requests == [request] and client.model == "m"


def judge_args(server: FakeServer, data: Path, tmp_path: Path) -> list[str]:
    args = ["judge", "--data", str(data), "--task", "guide", "--limit", "2", "--judge-base-url", server.base_url,
            "--judge-model", "gpt-4o-2024-11-20", "--workspace", str(tmp_path / "ws"), "-o",
            str(tmp_path / "tow.jsonl"), "--no-progress"]
    for model in MODELS:
        args += ["--models", model]
    return args


def test_judge_dry_run_counts_the_calls_of_the_real_run(fake_server: FakeServer, tmp_path: Path,
                                                         bench_root: Path) -> None:
    fake_server.handler = valid_weights
    args = judge_args(fake_server, bench_root, tmp_path)
    output = invoke(args + ["--dry-run"])
    assert fake_server.requests == [] and not (tmp_path / "tow.jsonl").exists() and not (tmp_path / "ws").exists()
    assert counted(output, "weights") == 2  # once per item, shared by both models
    assert counted(output, "leaf:logic") == 4  # one per writing
    planned = counted(output)
    assert re.search(r"total .*~\$\d+\.\d*[1-9]", output)  # gpt-4o is in the price table: a non-zero cost
    assert counted(output, "preflight") == 1  # one tiny call per base URL of the judge endpoint
    invoke(args)
    # weights + 7 LLM leaves per writing (formatting: rule), and the preflight before them
    assert planned == len(fake_server.requests) == 1 + 2 + 4 * 7
    resumed = invoke(args + ["--dry-run"])
    assert counted(resumed) == 1 and counted(resumed, "preflight") == 1  # nothing left to judge; the check stays
    assert counted(invoke(args + ["--dry-run", "--no-preflight"])) == 0


def test_generate_dry_run_counts_the_calls_of_the_real_run(fake_server: FakeServer, tmp_path: Path,
                                                            bench_root: Path) -> None:
    out = tmp_path / "w.jsonl"
    args = ["generate", "--data", str(bench_root), "--task", "completion", "--limit", "3", "--base-url",
            fake_server.base_url, "--model", "fake-writer", "--workspace", str(tmp_path / "ws"), "-o", str(out),
            "--no-progress", "--max-tokens", "300"]
    output = invoke(args + ["--dry-run"])
    assert fake_server.requests == [] and not out.exists()
    assert counted(output, "generation") == 3 and "no price known" in output
    assert re.search(r"generation\s+3 calls\s+~\s*[\d,]+ prompt\s+~\s*900 completion", output)
    assert counted(output) == 4  # and the preflight
    assert counted(invoke(args + ["--dry-run", "--no-preflight"])) == 3
    invoke(args)
    assert len(fake_server.requests) == 4
    assert counted(invoke(args + ["--dry-run", "--no-preflight"])) == 0


def test_run_dry_run_counts_generation_and_judging(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = valid_weights
    args = ["run", "--data", str(bench_root), "--task", "guide", "--limit", "2", "--models", MODELS[0],
            "--base-url", fake_server.base_url, "--model", "fake-writer", "--judge-base-url", fake_server.base_url,
            "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run"),
            "--bootstrap", "10", "--no-progress", "--max-tokens", "200"]
    output = invoke(args + ["--dry-run"])
    assert fake_server.requests == [] and not (tmp_path / "run").exists()
    assert counted(output, "generation") == 2 and counted(output, "weights") == 2
    assert counted(output, "leaf:logic") == 2  # the writing still to generate, per item (its own line)...
    assert counted(output, "all") == 14  # ...and re-judging the shipped one on its own line (weights are shared)
    assert "2 writing(s) not generated yet" in output
    planned = counted(output, "ALL")
    invoke(args)
    assert planned == len(fake_server.requests) == 2 + 2 + 2 + 4 * 7  # with the writer's and the judge's preflight


def test_dry_run_counts_two_preflights_for_two_base_urls(tmp_path: Path, bench_root: Path) -> None:
    """One preflight call per base URL of an endpoint; the same endpoint in two roles is checked once."""
    with FakeServer(valid_weights) as one, FakeServer(valid_weights) as two:
        args = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--method", "single",
                "--judge-base-url", one.base_url, "--judge-base-url", two.base_url, "--judge-model", "fake-judge",
                "--models", MODELS[0], "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "s.jsonl"),
                "--no-progress"]
        output = invoke(args + ["--dry-run"])
        assert counted(output, "preflight") == 2 and counted(output) == 3
        invoke(args)
        assert len(one.requests) + len(two.requests) == 3
        assert [r["messages"][0]["content"] for r in one.requests + two.requests].count("ping") == 2
