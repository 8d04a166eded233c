"""Issue 13, point 3 through the CLI: a base URL that dies mid-run leaves the pool and the user is told."""

from __future__ import annotations

import json
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
