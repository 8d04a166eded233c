"""A `howtobench run` killed with SIGKILL half-way resumes to the same final table as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fake_server import FakeServer, default_handler


def _command(server: FakeServer, bench_root: Path, run_dir: Path, workspace: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "howtobench",
        "run",
        "--run-dir",
        str(run_dir),
        "--workspace",
        str(workspace),
        "--data",
        str(bench_root),
        "--base-url",
        server.base_url,
        "--model",
        "fake-writer",
        "--judge-base-url",
        server.base_url,
        "--judge-model",
        "fake-judge",
        "--limit",
        "1",
        "--models",
        "deepseek-r1",
        "--models",
        "gpt-4o-2024-11-20",
        "--parallel",
        "1",
        "--bootstrap",
        "200",
        "--no-progress",
        "--max-tokens",
        "64",
    ]


def _table(run_dir: Path) -> dict[str, object]:
    data = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    return {k: data[k] for k in ("columns", "cells", "counts", "paired", "warnings")}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_killed_run_resumes_to_the_same_table(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    fake_server.latency = 0.05
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}

    reference_dir = tmp_path / "uninterrupted"
    done = subprocess.run(
        _command(fake_server, bench_root, reference_dir, tmp_path / "ws1"),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected = _table(reference_dir)
    assert len(expected["columns"]) == 3  # type: ignore[arg-type]

    run_dir, workspace = tmp_path / "killed", tmp_path / "ws2"
    judgments = run_dir / "judgments" / "tow.jsonl"
    proc = subprocess.Popen(
        _command(fake_server, bench_root, run_dir, workspace),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while _lines(judgments) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    killed_at = _lines(judgments)
    assert 3 <= killed_at < 9, f"the kill should land half-way, it came after {killed_at} of 9 judgments"
    assert not (run_dir / "leaderboard.json").exists()

    requests_before = len(fake_server.requests)
    resumed = subprocess.run(
        _command(fake_server, bench_root, run_dir, workspace), env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert _table(run_dir) == expected
    assert _lines(judgments) == 9
    assert len(fake_server.requests) - requests_before < requests_before  # resumed, not redone
