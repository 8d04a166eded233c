"""One process per output (issue 13, point 7): a second process on the same output refuses, naming the holder;
a dead holder's lock is taken over (and said); different outputs share one workspace safely."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import build_app, main
from howtobench.errors import OutputError
from howtobench.locks import lock_path, output_lock


def _wait_for(check: Callable[[], bool], timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_second_holder_refused_with_the_first_named(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    with output_lock(out):
        holder = json.loads(lock_path(out, folder=False).read_text(encoding="utf-8"))
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        with pytest.raises(OutputError) as refused, output_lock(out):
            pass
    message = str(refused.value)
    assert message.startswith(f"{out} is in use by another howtobench process (pid {os.getpid()} on "
                              f"{socket.gethostname()}, started {holder['started_at']}")
    assert message.endswith(f"wait for it to finish or choose another output (lock file {tmp_path / '.j.jsonl.lock'})")
    assert not lock_path(out, folder=False).exists()  # released and removed
    with output_lock(tmp_path / "run", folder=True):  # a folder's lock lives inside it
        assert (tmp_path / "run" / ".howtobench.lock").is_file()


def test_lock_of_a_killed_process_is_taken_over_and_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "j.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time, pathlib; from howtobench.locks import output_lock\n"
        f"with output_lock(pathlib.Path({str(out)!r})):\n    time.sleep(60)")])
    lock = lock_path(out, folder=False)
    _wait_for(lambda: lock.is_file() and lock.stat().st_size > 0)
    with pytest.raises(OutputError, match=f"pid {holder.pid} on"), output_lock(out):
        pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert lock.is_file()  # a killed process cannot clean up
    with caplog.at_level(logging.WARNING), output_lock(out):
        assert json.loads(lock.read_text(encoding="utf-8"))["pid"] == os.getpid()
    (record,) = caplog.records
    assert record.getMessage().startswith(f"took over the lock of {out} left by pid {holder.pid} on ")
    assert record.getMessage().endswith(", which is no longer running")


# ------------------------------------------------------------------ as users run it: two processes


def _judge_args(server: FakeServer, out: Path, workspace: Path, bench_root: Path) -> list[str]:
    return ["judge", "--method", "single", "--data", str(bench_root), "--task", "guide", "--limit", "3",
            "--models", "deepseek-r1", "--models", "gpt-4o-2024-11-20", "--judge-base-url", server.base_url,
            "--judge-model", "fake-judge", "--workspace", str(workspace), "-o", str(out), "--no-progress"]


def _spawn(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "howtobench", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_judges_on_one_output(fake_server: FakeServer, tmp_path: Path, bench_root: Path,
                                  monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The second `howtobench judge` on the output the first is writing exits 2 at once, naming the first;
    the first finishes alone: no call paid twice, no judgment written twice."""
    released = threading.Event()  # until the second process has been refused, the first one's calls are slow
    fake_server.handler = lambda req: dataclasses.replace(default_handler(req), delay=0 if released.is_set() else 1)
    out = tmp_path / "j.jsonl"
    args = _judge_args(fake_server, out, tmp_path / "ws", bench_root)
    build_app(["judge"])  # imports done now, so the second attempt below takes well under a second
    first = _spawn([*args, "--judge-concurrency", "1"], tmp_path)
    _wait_for(lambda: len(fake_server.requests) > 0)  # it holds the lock and is judging
    monkeypatch.setattr(sys, "argv", ["howtobench", *args])
    with pytest.raises(SystemExit) as second:
        main()
    released.set()
    err = capsys.readouterr().err
    assert first.poll() is None  # the first was still running when the second refused
    assert second.value.code == 2 and "Traceback" not in err, err
    assert "error: " in err, err  # after the cost estimate, which comes first
    refusal = err[err.index("error: "):]
    assert refusal.startswith(f"error: {out} is in use by another howtobench process (pid {first.pid} on "
                              f"{socket.gethostname()}, started ")
    assert "`howtobench judge --method single" in err
    assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6 == len({(r["item_id"], r["model"]) for r in rows})
    # the first process's preflight (sent once it held the lock), then one call per writing; the refused second
    # process sent nothing, not even a preflight
    assert len(fake_server.requests) == 1 + 6 and fake_server.requests[0]["messages"][0]["content"] == "ping"
    assert not lock_path(out, folder=False).exists()


def test_different_outputs_share_one_workspace(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    """Two processes with different outputs at the same time on one workspace (one SQLite call cache): both
    finish complete, the call log holds every call of both, and the database is sound."""
    fake_server.handler = lambda req: Reply.json({"score": 7, "reason": "fine"}, delay=0.02)
    workspace = tmp_path / "ws"
    procs = [_spawn(_judge_args(fake_server, tmp_path / f"j{k}.jsonl", workspace, bench_root)
                    + ["--samples", "3", "--seed", str(k)], tmp_path) for k in (1, 2)]
    for proc in procs:
        assert proc.wait(timeout=180) == 0, proc.stderr.read() if proc.stderr else ""
    for k in (1, 2):
        rows = [json.loads(line) for line in (tmp_path / f"j{k}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)
    db = sqlite3.connect(workspace / "calls.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    logged = db.execute("SELECT count(*), sum(from_cache = 0) FROM calls WHERE purpose != 'preflight'").fetchone()
    assert logged[0] == 36  # 2 processes x 6 writings x 3 samples, each logged once
    logged = db.execute("SELECT count(*), sum(from_cache = 0) FROM calls").fetchone()
    assert logged[0] == 36 + 2  # and one preflight per process
    assert logged[1] == len(fake_server.requests)  # a fresh row for every request the server saw, none lost


# What `import fcntl` meets on Windows: an ImportError (a None entry in sys.modules blocks the import).
_NO_FCNTL = "import sys; sys.modules['fcntl'] = None\n"


def test_without_fcntl_a_lock_is_one_config_error_and_nothing_is_made(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    probe = _NO_FCNTL + (
        "import pathlib\nfrom howtobench.locks import output_lock\n"
        f"try:\n    output_lock(pathlib.Path({str(out)!r})).__enter__()\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc, sep=': ')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == ("ConfigError: howtobench needs a POSIX system (Linux, macOS; on Windows: WSL) for the file "
                           "locks that keep two processes off one output (fcntl.flock is missing here)\n")
    assert list(tmp_path.iterdir()) == []  # no lock file, no output


def test_without_fcntl_a_command_stops_with_one_line(tmp_path: Path, bench_root: Path) -> None:
    out = tmp_path / "j.jsonl"
    args = ["generate", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--workspace", str(tmp_path / "ws"), "-o", str(out),
            "--no-progress"]
    done = subprocess.run([sys.executable, "-c", _NO_FCNTL + "from howtobench.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1:] == [
        "error: howtobench needs a POSIX system (Linux, macOS; on Windows: WSL) for the file locks that keep two "
        "processes off one output (fcntl.flock is missing here)"]
    assert "Traceback" not in done.stderr and not out.exists()
