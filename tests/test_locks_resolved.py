"""Issue 23, defect 7: the lock holds however the output is named.

A symlink to an output and `judge -o` into a run directory that `run` was writing both took a lock of their own,
so two processes wrote the same judgments (duplicate rows, calls paid twice). Now the lock is on the resolved
path, and a run directory is locked as a whole (see `howtobench.locks`).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from howtobench.errors import OutputError
from howtobench.locks import lock_path, output_lock


def _hold(output: Path, *, folder: bool) -> subprocess.Popen[bytes]:
    """Another process holding the lock of `output` for a minute (killed by the test)."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time, pathlib; from howtobench.locks import output_lock\n"
        f"with output_lock(pathlib.Path({str(output)!r}), folder={folder}):\n    time.sleep(60)")])
    lock = lock_path(output, folder=folder)
    deadline = time.monotonic() + 60
    while not (lock.is_file() and lock.stat().st_size > 0):
        assert time.monotonic() < deadline and holder.poll() is None, "the holder did not take its lock"
        time.sleep(0.05)
    return holder


def test_a_symlink_to_a_locked_output_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.touch()
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with output_lock(real), pytest.raises(OutputError, match="is in use by another howtobench process"), \
            output_lock(link):
        pass


def test_a_file_inside_a_run_directory_being_written_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "x"
    holder = _hold(run_dir, folder=True)
    try:
        refused = f"{run_dir} is in use by another howtobench process .pid {holder.pid}"
        with pytest.raises(OutputError, match=refused), output_lock(run_dir / "judgments" / "tow.jsonl"):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_run_directory_with_a_file_being_written_inside_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "x"
    out = run_dir / "judgments" / "tow.jsonl"
    holder = _hold(out, folder=False)
    try:
        refused = f"{run_dir} is in use: {out} inside it is being written by another howtobench process .pid "
        refused += str(holder.pid)
        with pytest.raises(OutputError, match=refused), output_lock(run_dir, folder=True):
            pass
        assert not (run_dir / ".howtobench.lock").exists()  # refused: its own lock is let go
    finally:
        holder.kill()
        holder.wait()


def test_a_file_inside_a_folder_this_process_holds_is_no_conflict(tmp_path: Path) -> None:
    with output_lock(tmp_path / "run", folder=True), output_lock(tmp_path / "run" / "j.jsonl"):
        assert lock_path(tmp_path / "run" / "j.jsonl", folder=False).is_file()
