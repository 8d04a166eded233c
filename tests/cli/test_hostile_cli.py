"""Issue 23, end to end through the CLI: what a hostile environment does to a run.

- a kill -9 while POST /batches awaits its reply, then a re-run: exactly one batch is created (and paid for);
- a server that echoes the key, the URL's password and its query key: in no output and no file;
- an API key pasted where a variable name belongs: refused without echo, written to no file;
- `-o /dev/full`: one line, exit 2, within seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fake_batch_server import FakeBatchServer
from judge_replies import server_handler


def judge_command(bench_root: Path, tmp_path: Path, base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "howtobench", "judge", "--data", str(bench_root), "--method", "tow",
            "--task", "guide", "--limit", "2", "--models", "deepseek-chat", "--judge-base-url", base_url,
            "--judge-model", "gpt-4o-2024-11-20", "--no-progress", "-o", str(tmp_path / "tow.jsonl"),
            "--workspace", str(tmp_path / "ws"), *extra]


def test_a_kill_during_batch_creation_then_a_rerun_creates_one_batch(bench_root: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    command = judge_command(bench_root, tmp_path, "", "--batch", "--batch-poll", "0.1")
    with FakeBatchServer(server_handler(), polls=1) as server:
        command[command.index("--judge-base-url") + 1] = server.base_url
        server.create_delay = 4.0  # the provider makes the batch; its reply is still on the way at the kill
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while not server.created and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        assert server.created, first.communicate()[0] if first.poll() is not None else "no batch created"
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        server.create_delay = 0.0
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert second.returncode == 0, second.stdout + second.stderr
    assert server.created == ["batch_2"] and len(server.uploads) == 1  # found by its file: one batch, one payment
    assert "batch batch_2: resuming" in second.stderr
    judgments = [json.loads(line) for line in (tmp_path / "tow.jsonl").read_text().splitlines()]
    assert len(judgments) == 2 and {j["status"] for j in judgments} == {"ok"}
