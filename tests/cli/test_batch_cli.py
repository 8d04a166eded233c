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


def test_generate_batch_submits_only_what_max_cost_leaves_room_for(bench_root: Path, tmp_path: Path) -> None:
    """--max-cost under --batch: each request priced at its upper bound (here exactly what it is billed: 1,000
    completion tokens at $10 / M, half at the batch rate = $0.005) before it is submitted."""
    from fake_server import Reply

    prices = tmp_path / "prices.yaml"
    prices.write_text("my-model: {input: 0.0, output: 10.0, batch: 0.5}\n", encoding="utf-8")
    out = tmp_path / "w.jsonl"
    args = ["generate", "--data", str(bench_root), "--base-url", "BASE", "--model", "my-model", "--task", "open",
            "--limit", "4", "--max-tokens", "1000", "-o", str(out), "--workspace", str(tmp_path / "ws"), "--batch",
            "--batch-poll", "0.02", "--no-progress", "--prices", str(prices), "--yes"]
    billed = {"prompt_tokens": 0, "completion_tokens": 1000}
    with FakeBatchServer(lambda request: Reply.text("一篇文章。", usage=billed), polls=1) as server:
        argv = [server.base_url if a == "BASE" else a for a in args]
        stopped = CliRunner().invoke(app, [*argv, "--max-cost", "0.012"])
        # $0.012 leaves room for two requests ($0.010): one batch of 2; the other two are never submitted
        assert stopped.exit_code != 0
        assert "--max-cost $0.01: $0.0100 accounted, and the 2 requests not submitted may cost up to $0.0100 more" \
            in str(stopped.exception)
        assert [len(upload.decode().splitlines()) for upload in server.uploads] == [2]
        assert len(out.read_text(encoding="utf-8").splitlines()) == 2  # what was paid for is written
        resumed = CliRunner().invoke(app, argv)
        assert resumed.exit_code == 0, resumed.output
        assert [len(upload.decode().splitlines()) for upload in server.uploads] == [2, 2]
        assert len(out.read_text(encoding="utf-8").splitlines()) == 4


def test_run_through_batches(bench_root: Path, tmp_path: Path) -> None:
    """`run --batch`: the writings go out as one batch, then their judgments as another, through the same client."""
    from fake_server import default_handler

    run_dir = tmp_path / "run"
    with FakeBatchServer(default_handler, polls=1) as server:
        result = CliRunner().invoke(app, [
            "run", "--data", str(bench_root), "--task", "open", "--limit", "2", "--method", "single",
            "--base-url", server.base_url, "--model", "gpt-4o", "--judge-base-url", server.base_url,
            "--judge-model", "gpt-4o-2024-11-20", "--workspace", str(tmp_path / "ws"), "--run-dir", str(run_dir),
            "--bootstrap", "10", "--no-progress", "--batch", "--batch-poll", "0.02", "--yes"])
    assert result.exit_code == 0, (result.output, result.exception)
    uploads = [[json.loads(line)["body"] for line in u.decode().splitlines()] for u in server.uploads]
    assert [[b["model"] for b in lines] for lines in uploads] == [["gpt-4o"] * 2, ["gpt-4o-2024-11-20"] * 2]
    assert all("response_format" in b for b in uploads[1]) and not any("response_format" in b for b in uploads[0])
    judged = [json.loads(line) for line in (run_dir / "judgments" / "single.jsonl").read_text().splitlines()]
    assert [(j["model"], j["status"]) for j in judged] == [("gpt-4o", "ok")] * 2
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["usage"]["generation"]["calls"] == 2
