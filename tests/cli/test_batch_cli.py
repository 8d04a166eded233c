"""`--batch` as a user runs it: generate through a batch, and a batch judge run killed mid-batch that resumes
the same batch (no second upload, no second payment) and completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from fake_batch_server import FakeBatchServer
from howtobench.cli.main import app
from howtobench.llm.batch import BatchStore
from judge_replies import server_handler


def test_generate_through_a_batch(bench_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    with FakeBatchServer(server_handler(), polls=1) as server:
        result = CliRunner().invoke(app, [
            "generate", "--data", str(bench_root), "--base-url", server.base_url, "--model", "gpt-4o",
            "--task", "open", "--limit", "2", "-o", str(out), "--workspace", str(tmp_path / "ws"),
            "--batch", "--batch-poll", "0.02", "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["output"].startswith("# 标题") for r in rows)
    assert len(server.created) == 1 and len(server.uploads[0].decode().splitlines()) == 2
    assert "submitted 2 requests" in result.output


def judge_command(bench_root: Path, tmp_path: Path, base_url: str) -> list[str]:
    return [sys.executable, "-m", "howtobench", "judge", "--data", str(bench_root), "--method", "tow",
            "--task", "guide", "--limit", "2", "--models", "deepseek-chat", "--judge-base-url", base_url,
            "--judge-model", "gpt-4o-2024-11-20", "--batch", "--batch-poll", "0.1", "--no-progress",
            "-o", str(tmp_path / "tow.jsonl"), "--workspace", str(tmp_path / "ws")]


def test_a_killed_batch_judge_run_resumes_its_batch(bench_root: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    with FakeBatchServer(server_handler(), polls=1_000_000) as server:  # the batch stays in progress
        first = subprocess.Popen(judge_command(bench_root, tmp_path, server.base_url), env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while server.status_checks < 2 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert server.status_checks >= 2, first.communicate()[0] if first.poll() is not None else "no poll"
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        assert len(server.created) == 1 and not (tmp_path / "tow.jsonl").read_text().strip()
        [stored] = list(BatchStore(tmp_path / "ws").folder.glob("*.json"))
        assert json.loads(stored.read_text())["id"] == server.created[0]

        server.polls = 0  # the provider finishes the batch while nobody watches
        second = subprocess.run(judge_command(bench_root, tmp_path, server.base_url), env=env,
                                capture_output=True, text=True, timeout=300, check=False)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"batch {server.created[0]}: resuming (16 of its requests still wanted)" in second.stderr
    assert len(server.created) == 1 and len(server.uploads) == 1  # picked up, not submitted again
    judgments = [json.loads(line) for line in (tmp_path / "tow.jsonl").read_text().splitlines()]
    assert len(judgments) == 2 and {j["status"] for j in judgments} == {"ok"}
