"""Ctrl-C drains (issue 34, item 5): a real `howtobench judge` process gets SIGINT while its calls are in flight at
the fake judge; the first Ctrl-C sends nothing new, lets the calls in flight land and be recorded and exits 130;
the same command then finishes, and the fake — which remembers the digest of every request it answered — counts
no request sent again. A second Ctrl-C stops at once.

The command is started with SIGINT at its default: a process started in the background by a non-interactive shell
ignores SIGINT (and then keeps ignoring it, as it should)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fake_server import FakeServer, Reply
from howtobench.errors import EXIT_INTERRUPTED, INTERRUPTED
from judge_replies import server_handler

SRC = Path(__file__).resolve().parents[2] / "src"


def judge_command(server: FakeServer, bench_root: Path, tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "howtobench", "judge", "--data", str(bench_root), "--task", "guide", "--limit", "4",
            "--models", "deepseek-chat", "--models", "gpt-4o-2024-11-20", "--judge-base-url", server.base_url,
            "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "tow.jsonl"),
            "--no-progress", "--no-preflight"]


def start(command: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def slow(delay: float) -> Callable[[dict], Reply]:
    answer = server_handler()

    def handler(request: dict) -> Reply:
        reply = answer(request)
        reply.delay = delay
        return reply

    return handler


def test_first_ctrl_c_lets_the_calls_in_flight_land_and_nothing_is_paid_twice(bench_root: Path,
                                                                              tmp_path: Path) -> None:
    with FakeServer(slow(1.5)) as server:
        command = judge_command(server, bench_root, tmp_path)
        process = start(command)
        wait_for(lambda: len(server.requests) >= 4)  # the items' weight calls are on the wire
        time.sleep(0.2)
        sent = len(server.requests)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert process.returncode == EXIT_INTERRUPTED, err
        waited = re.search(r"no new calls are sent; waiting for the (\d+) in flight to be answered and recorded "
                           r"\(at most (\d+) s, their timeout\)", err)
        assert waited is not None, err
        assert int(waited.group(1)) == sent and 250 <= int(waited.group(2)) <= 300  # the endpoint's 300 s timeout
        assert err.strip().splitlines()[-1] == INTERRUPTED
        assert "Traceback" not in err
        assert len(server.requests) == sent  # nothing was sent after the Ctrl-C
        assert len(server.answered) == sent  # and every call in flight was answered...
        server.handler = server_handler()
        done = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert server.repeated == 0  # ...and recorded: none of them was sent again
        assert len(server.answered) == len(server.requests)


def test_a_second_ctrl_c_stops_at_once(bench_root: Path, tmp_path: Path) -> None:
    with FakeServer(slow(30.0)) as server:
        process = start(judge_command(server, bench_root, tmp_path))
        wait_for(lambda: len(server.requests) >= 4)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
        assert time.monotonic() - started < 10  # not the 30 s the calls in flight would take
        assert process.returncode == EXIT_INTERRUPTED, err
        assert err.strip().splitlines()[-1] == INTERRUPTED and "Traceback" not in err
