"""`howtobench generate` from the command line, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fake_server import FakeServer, default_handler
from howtobench.cli.main import app


def test_generate_cli_writes_release_format_and_resumes(
    fake_server: FakeServer, tmp_path: Path, bench_root: Path
) -> None:
    fake_server.handler = default_handler
    out = tmp_path / "mine.jsonl"
    args = [
        "generate",
        "--data",
        str(bench_root),
        "--task",
        "open",
        "--limit",
        "2",
        "-o",
        str(out),
        "--base-url",
        fake_server.base_url,
        "--model",
        "fake-writer",
        "--workspace",
        str(tmp_path / "ws"),
        "--system-prompt",
        "你是一位作家。",
        "--max-tokens",
        "100",
        "--no-progress",
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["task_type"] for r in rows] == ["open", "open"] and rows[0]["model"] == "fake-writer"
    assert rows[0]["generation"]["system_prompt"] == "你是一位作家。"
    assert rows[0]["generation"]["sampling"]["max_tokens"] == 100
    ping, first_writing = fake_server.requests[:2]  # the preflight, then the work
    assert ping["messages"] == [{"role": "user", "content": "ping"}] and ping["max_tokens"] == 1
    assert first_writing["messages"][0] == {"role": "system", "content": "你是一位作家。"}
    assert rows[0]["output"].startswith("echo: ")  # the fake server echoes the prompt
    calls = len(fake_server.requests)
    again = CliRunner().invoke(app, args + ["--no-preflight"])
    assert again.exit_code == 0 and len(fake_server.requests) == calls
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
