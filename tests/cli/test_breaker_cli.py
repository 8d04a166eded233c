"""Issue 13, point 3 through the CLI: a base URL that dies mid-run leaves the pool and the user is told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from fake_server import FakeServer, hold_port


def _kill_when_served(victim: FakeServer, requests: int) -> threading.Thread:
    """Stop `victim` once it has received `requests` chat requests (mid-run, whatever the machine's speed)."""
    def watch() -> None:
        deadline = time.monotonic() + 60
        while len(victim.requests) < requests and time.monotonic() < deadline:
            time.sleep(0.005)
        victim.stop()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_url_killed_mid_judge_run_leaves_the_pool_with_a_warning(bench_root: Path, tmp_path: Path) -> None:
    """Three judge URLs, one killed mid-run: the run finishes on the other two (exit 0, every writing judged)
    and stderr says which URL left the pool and why — a third of the capacity gone is not silent."""
    holder = hold_port()  # the victim's port stays refused after its death (see tests/llm/test_llm_breaker.py)
    servers = [FakeServer(latency=0.02).start(),
               FakeServer(latency=0.02, port=holder.getsockname()[1], reuse_port=True).start(),
               FakeServer(latency=0.02).start()]
    victim = servers[1]
    out = tmp_path / "out.jsonl"
    args = ["judge", "--method", "single", "--data", str(bench_root), "--task", "guide", "--limit", "60",
            "--models", "deepseek-r1", "--judge-model", "fake-judge", "--judge-concurrency", "2", "--no-progress",
            "--workspace", str(tmp_path / "ws"), "-o", str(out)]
    for server in servers:
        args += ["--judge-base-url", server.base_url]
    watcher = _kill_when_served(victim, 8)
    try:
        done = subprocess.run([sys.executable, "-m", "howtobench", *args], capture_output=True, text=True,
                              timeout=300)
    finally:
        watcher.join(5)
        for server in servers:
            server.stop()
        holder.close()
    assert done.returncode == 0, done.stderr
    assert len([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]) == 60
    left = [line for line in done.stderr.splitlines() if "left the pool" in line]
    assert len(left) == 1, done.stderr
    assert left[0].startswith(f"warning: {victim.base_url} left the pool after 3 failed connections in a row "
                              f"(cannot connect to {victim.base_url}/chat/completions: "), left
    assert left[0].endswith("); calls go to the other 2 base URLs, and it is tried again in 10 s"), left


def test_a_url_dead_at_the_start_is_reported_once_by_the_preflight(bench_root: Path, tmp_path: Path) -> None:
    """The preflight names a dead URL once ('... — going on without it') and its summary does not count that URL
    as one that answered (it listed every URL as answered); the pool's own warning is not repeated there."""
    holder = hold_port()  # a port nothing listens on, refused for as long as the test holds it
    dead = f"http://127.0.0.1:{holder.getsockname()[1]}/v1"
    out = tmp_path / "out.jsonl"
    try:
        with FakeServer() as live:
            args = ["judge", "--method", "single", "--data", str(bench_root), "--task", "guide", "--limit", "3",
                    "--models", "deepseek-r1", "--judge-model", "fake-judge", "--no-progress",
                    "--judge-base-url", live.base_url, "--judge-base-url", dead,
                    "--workspace", str(tmp_path / "ws"), "-o", str(out)]
            done = subprocess.run([sys.executable, "-m", "howtobench", *args], capture_output=True, text=True,
                                  timeout=300, env={**os.environ, "COLUMNS": "400"})
    finally:
        holder.close()
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    summary = next(k for k, line in enumerate(lines) if line.startswith("preflight: "))
    before = lines[:summary]
    assert [line for line in before if dead in line and "going on without it" in line] != []
    assert not [line for line in before if "left the pool" in line], done.stderr
    assert lines[summary].startswith("preflight: judge fake-judge answered at 1 of 2 base URLs ("), lines[summary]
