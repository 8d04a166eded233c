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


ECHOED = ("qk-ECHOED-9f8e7d", "pw-ECHOED-4c3b2a", "sk-ECHOED-key-5566")


def _files_holding(root: Path, texts: tuple[str, ...]) -> list[str]:
    return [f"{p}: {t}" for p in root.rglob("*") if p.is_file() for t in texts if t.encode() in p.read_bytes()]


def test_a_secret_echoed_by_the_server_is_in_no_output_and_no_file(bench_root: Path, tmp_path: Path) -> None:
    from fake_server import FakeServer, Reply

    query, password, key = ECHOED
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root), "HTB_ECHO_KEY": key, "COLUMNS": "200"}
    with FakeServer() as server:
        server.handler = lambda body: Reply.error(401, f"no access for /v1/chat/completions?api-key={query} ({key})")
        host = server.base_url.removeprefix("http://")
        command = judge_command(bench_root, tmp_path, f"http://{host}?api-key={query}",
                                "--judge-api-key-env", "HTB_ECHO_KEY")
        judged = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
        usage = subprocess.run([sys.executable, "-m", "howtobench", "llm", "usage", "--workspace",
                                str(tmp_path / "ws")], env=env, capture_output=True, text=True, timeout=120,
                               check=False)
        # the password travels in the URL of a second endpoint (userinfo and a key cannot be given together)
        user_url = f"http://judge:{password}@{host}"
        server.handler = lambda body: Reply.error(403, f"user judge:{password} may not (password {password})")
        second = subprocess.run(judge_command(bench_root, tmp_path / "b", user_url), env=env, capture_output=True,
                                text=True, timeout=300, check=False)
    assert judged.returncode == 2 and second.returncode == 2
    assert "answered HTTP 401" in judged.stderr and "api-key=***" in judged.stderr
    assert "stopped" in usage.stdout.lower() or "401" in usage.stdout, usage.stdout
    shown = judged.stdout + judged.stderr + usage.stdout + usage.stderr + second.stdout + second.stderr
    assert [t for t in ECHOED if t in shown] == []
    assert _files_holding(tmp_path, ECHOED) == []


def _at_most_2_gb() -> None:
    """A regression reads /dev/full until the kernel kills it: keep it from taking the machine's memory first."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_dev_full_as_output_is_one_line_and_exit_2(bench_root: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root), "COLUMNS": "200"}
    command = judge_command(bench_root, tmp_path, "http://127.0.0.1:9/v1")
    command[command.index("-o") + 1] = "/dev/full"
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=_at_most_2_gb)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: cannot write /dev/full: it is not a regular file (a device, pipe or socket); outputs are files the "
        "next run reads back to resume: give a file path"]
    assert time.monotonic() - started < 60  # seconds, not the hours of reading /dev/full back


def test_ctrl_c_then_a_rerun_sends_again_only_what_was_in_flight(bench_root: Path, tmp_path: Path) -> None:
    import sqlite3

    from fake_server import FakeServer

    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    with FakeServer() as server:
        server.handler, server.latency = server_handler(), 0.1
        command = judge_command(bench_root, tmp_path, server.base_url, "--judge-concurrency", "4", "--no-preflight")
        command[command.index("--limit") + 1] = "6"
        first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(server.requests) < 25 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.005)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=60)
        sent = {json.dumps(body, sort_keys=True) for body in server.requests}
        db = sqlite3.connect(tmp_path / "ws" / "calls.sqlite")
        logged = {json.dumps(json.loads(row[0]), sort_keys=True)
                  for row in db.execute("SELECT request_json FROM calls WHERE status = 'ok' AND from_cache = 0")}
        db.close()
        seen = len(server.requests)
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
        again = {json.dumps(body, sort_keys=True) for body in server.requests[seen:]}
    assert first.returncode == 130 and err.strip().splitlines()[-1].startswith("interrupted: what finished is saved")
    assert second.returncode == 0, second.stderr
    assert sent & again == sent - logged  # only the calls whose answer had not come back are sent again
    assert len(sent - logged) <= 4  # at most the calls in flight
