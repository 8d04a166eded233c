"""Issue 13, point 2: a wrong key, model name or URL stops a command before its first item, with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import app
from howtobench.errors import PermanentError

PING = [{"role": "user", "content": "ping"}]


def _judge_args(server: FakeServer, data: Path, tmp_path: Path) -> list[str]:
    return ["judge", "--method", "single", "--data", str(data), "--task", "guide", "--limit", "2",
            "--judge-base-url", server.base_url, "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"),
            "--models", "deepseek-r1", "-o", str(tmp_path / "out.jsonl"), "--no-progress"]


def test_a_wrong_key_stops_judge_with_one_line_and_one_request(fake_server: FakeServer, bench_root: Path,
                                                               tmp_path: Path) -> None:
    fake_server.handler = lambda _r: Reply.error(401, "Incorrect API key provided")
    done = subprocess.run([sys.executable, "-m", "howtobench", *_judge_args(fake_server, bench_root, tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (  # after the cost estimate: one line
        f"error: {fake_server.base_url}/chat/completions answered HTTP 401 for model fake-judge: "
        "Incorrect API key provided. Check the base URL, the model name and the API key variable (none).")
    assert [r["messages"] for r in fake_server.requests] == [PING]
    assert not (tmp_path / "out.jsonl").exists()


def test_a_wrong_judge_model_stops_run_before_anything_is_generated(fake_server: FakeServer, bench_root: Path,
                                                                     tmp_path: Path) -> None:
    fake_server.handler = lambda body: (Reply.error(404, "model 'fake-jduge' not found")
                                        if body["model"] == "fake-jduge" else default_handler(body))
    result = CliRunner().invoke(app, [
        "run", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--method", "single",
        "--base-url", fake_server.base_url, "--model", "fake-writer", "--judge-base-url", fake_server.base_url,
        "--judge-model", "fake-jduge", "--workspace", str(tmp_path / "ws"), "--run-dir",
        str(tmp_path / "runs" / "r"), "--no-progress"])
    assert isinstance(result.exception, PermanentError) and "model 'fake-jduge' not found" in str(result.exception)
    assert [(r["model"], r["messages"]) for r in fake_server.requests] == [("fake-writer", PING), ("fake-jduge", PING)]
    assert not (tmp_path / "runs").exists()  # issue 40: no empty runs/<name>/ left behind (nor the runs/ it made)


def test_a_failed_preflight_keeps_a_run_directory_that_was_there(fake_server: FakeServer, bench_root: Path,
                                                                   tmp_path: Path) -> None:
    """Only the folders the failed run made go: an existing run directory (an earlier run's) stays, as it was."""
    fake_server.handler = lambda _r: Reply.error(401, "Incorrect API key provided")
    (tmp_path / "run").mkdir()
    result = CliRunner().invoke(app, [
        "run", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--method", "single",
        "--base-url", fake_server.base_url, "--model", "fake-writer", "--judge-base-url", fake_server.base_url,
        "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run"),
        "--no-progress"])
    assert isinstance(result.exception, PermanentError)
    assert (tmp_path / "run").is_dir() and list((tmp_path / "run").iterdir()) == []


def test_no_preflight_and_replay_send_none(fake_server: FakeServer, bench_root: Path, tmp_path: Path) -> None:
    args = _judge_args(fake_server, bench_root, tmp_path)
    result = CliRunner().invoke(app, [*args, "--no-preflight"])
    assert result.exit_code == 0, result.output
    assert PING not in [r["messages"] for r in fake_server.requests] and len(fake_server.requests) == 2
    replayed = CliRunner().invoke(app, [*args, "--replay", "-o", str(tmp_path / "replayed.jsonl")])
    assert replayed.exit_code == 0, replayed.output
    assert len(fake_server.requests) == 2  # a replay calls nothing, not even the preflight
