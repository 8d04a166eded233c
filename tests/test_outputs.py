"""Filesystem failures are one line naming the path, exit status 2, no traceback (issue 13, point 9).

Real cases where the machine allows them: a path under a file, a directory given as -o, and — inside a user
namespace (`unshare -rm`) — a read-only file system and a full tiny tmpfs. The same failures are also injected at
the write seam (an OSError from the file handle), and SQLite's "database or disk is full" at the COMMIT of the
migration, so every machine runs the checks.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import howtobench.llm.cache as cache
from howtobench.cli.main import main
from howtobench.data.models import Item, Writing
from howtobench.errors import OutputError
from howtobench.judges.base import Judgment
from howtobench.judges.runner import run_judge
from howtobench.llm.cache import CallRecord, CallStore
from howtobench.outputs import write_text_atomic

JUDGE = ["judge", "--method", "rouge", "--task", "guide", "--limit", "3", "--models", "deepseek-r1", "--no-progress"]


def howtobench(*args: str, cwd: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> subprocess.CompletedProcess[str]:
    """The command line's entry point as a user runs it (exit status and stderr as they are), in this process."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOWTOBENCH_DATA", str(bench_root))
    monkeypatch.setenv("HOWTOBENCH_WORKSPACE", str(cwd / "ws"))
    monkeypatch.setattr(sys, "argv", ["howtobench", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, int(done.value.code or 0), out, err)


def assert_one_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"error: {message}", result.stderr
    assert "Traceback" not in result.stderr


def test_output_under_a_file_and_a_directory_as_output(tmp_path: Path, bench_root: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    env = {"cwd": tmp_path, "bench_root": bench_root, "monkeypatch": monkeypatch, "capsys": capsys}
    under = howtobench(*JUDGE, "-o", "afile/j.jsonl", **env)
    assert_one_line(under, "cannot write afile/j.jsonl: afile is a file, not a folder")
    folder = howtobench(*JUDGE, "-o", "adir", **env)
    assert_one_line(folder, "cannot write adir: it is a directory; give a file name inside it, such as adir/out.jsonl")
    run_dir = howtobench("run", "--method", "rouge", "--no-generate", "--models", "deepseek-r1", "--task",
                         "guide", "--limit", "1", "--judge-model", "x", "--judge-base-url", "http://127.0.0.1:9/v1",
                         "--run-dir", "afile/run", "--no-progress", **env)
    assert_one_line(run_dir, "cannot write afile/run: afile is a file, not a folder")
    judged = tmp_path / "j.jsonl"
    judged.write_text(Judgment(method="rouge", item_id="i1", model="m", task="guide", genre="letters",
                               score=0.5).model_dump_json() + "\n", encoding="utf-8")
    for command in (["leaderboard", str(judged), "--format", "markdown"], ["report", str(judged)]):
        written = howtobench(*command, "-o", "adir", **env)
        assert_one_line(written, "cannot write adir: it is a directory; give a file name inside it, such as "
                                 "adir/out.jsonl")


# ------------------------------------------------------------------ injected at the write seam


class _Pair:
    def __init__(self) -> None:
        self.item = Item(infer_id="i1", task_type="guide", basic_instruction="写", genre="essay")
        self.writing = Writing(infer_id="i1", model="m", output="x")


class _Fixed:
    method = "fixed"

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        return Judgment(method="fixed", item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                        score=1.0)


@pytest.mark.parametrize(("code", "cause"), [(errno.ENOSPC, "the disk is full"),
                                             (errno.EROFS, "the file system is read-only"),
                                             (errno.EACCES, "permission denied")])
async def test_write_failures_name_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int,
                                              cause: str) -> None:
    """An OSError from the file (a full disk on write, a read-only or forbidden folder on open) is one OutputError."""
    out = tmp_path / "j.jsonl"

    class FullFile:
        """A file on a full disk: opening works, writing does not."""

        closed = False

        def write(self, text: str) -> int:
            raise OSError(code, os.strerror(code))

        def flush(self) -> None:
            raise OSError(code, os.strerror(code))

        def close(self) -> None:
            self.closed = True

    def open_output(self: Path, *args: Any, **kwargs: Any) -> Any:
        if code == errno.ENOSPC:
            return FullFile()
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(Path, "open", open_output)
    pair = _Pair()
    with pytest.raises(OutputError) as caught:
        await run_judge(_Fixed(), [(pair.item, pair.writing)], out, progress=False)
    assert str(caught.value) == f"cannot write {out}: {cause}"


def test_atomic_write_keeps_the_old_file_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "leaderboard.md"
    path.write_text("old table", encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match=r"leaderboard.md: the disk is full$"):
        write_text_atomic(path, "new table")
    assert path.read_text(encoding="utf-8") == "old table" and os.listdir(tmp_path) == ["leaderboard.md"]


# ------------------------------------------------------------------ SQLite: the error that explains must win


class _FullAtCommit:
    """A connection whose COMMIT fails as on a full disk: SQLite rolls the transaction back itself and says
    "database or disk is full", so a ROLLBACK afterwards has no transaction to roll back."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            self._db.execute("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_full_disk_in_the_migration_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = cache._connect
    monkeypatch.setattr(cache, "_connect", lambda path: _FullAtCommit(real(path)))
    with pytest.raises(OutputError) as caught:
        CallStore.open(tmp_path / "ws")
    message = str(caught.value)
    db = tmp_path / "ws" / "calls.sqlite"
    assert message.startswith(f"cannot write the call cache {db}: database or disk is full")
    assert "cannot rollback" not in message


async def test_full_disk_in_the_call_log_reaches_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer thread's failed commit wakes the waiting call with the error (it used to die on the ROLLBACK
    and leave the call waiting for ever)."""
    store = CallStore.open(tmp_path)
    real = cache._connect
    monkeypatch.setattr(cache, "_connect", lambda path: _FullAtCommit(real(path)))
    record = CallRecord(key="k", run_id="r", purpose="p", model="m", status="ok", started_at="now")
    with pytest.raises(OutputError, match="database or disk is full"):
        await store.write(record)
    store.close()


# ------------------------------------------------------------------ a real full disk and read-only folder


def _namespace_mounts() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(not _namespace_mounts(), reason="cannot mount a tmpfs in a user namespace here")


def _in_tiny_tmpfs(folder: Path, script: str, *, free_kb: int, options: str = "") -> subprocess.CompletedProcess[str]:
    """Run `script` (sh) with a 64 KiB tmpfs on `folder` that has `free_kb` KiB left (private mount namespace)."""
    fill = f"dd if=/dev/zero of={folder}/fill bs=1k count={64 - free_kb} 2>/dev/null; " if free_kb < 64 else ""
    mount = f"mount -t tmpfs -o size=64k tmpfs {folder} && {fill}"
    remount = f"mount -o remount,{options} {folder} && " if options else ""
    return subprocess.run(["unshare", "-rm", "sh", "-c", mount + remount + script], capture_output=True, text=True,
                          timeout=120)


@needs_mounts
def test_real_full_disk_and_read_only_folder(tmp_path: Path, bench_root: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    command = (f"cd {tmp_path} && HOWTOBENCH_DATA={bench_root} {sys.executable} -m howtobench "
               + " ".join(JUDGE) + " --workspace ws -o disk/j.jsonl")
    full = _in_tiny_tmpfs(disk, command, free_kb=0)
    assert_one_line(full, "cannot write disk/j.jsonl: the disk is full")  # type: ignore[arg-type]
    read_only = _in_tiny_tmpfs(disk, command, free_kb=64, options="ro")
    assert_one_line(read_only, "cannot write disk/j.jsonl: the file system is read-only "  # type: ignore[arg-type]
                               "(disk/.j.jsonl.lock)")  # its lock file is the first thing written


@needs_mounts
def test_real_full_disk_under_the_call_cache(tmp_path: Path) -> None:
    """56 KiB free: SQLite creates the file, then the migration's COMMIT hits the full disk (measured here:
    the old code then said only 'cannot rollback - no transaction is active')."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f"{sys.executable} -c 'from pathlib import Path; from howtobench.llm.cache import CallStore; "
              f"CallStore.open(Path(\"{disk}/ws\"))'")
    result = _in_tiny_tmpfs(disk, script, free_kb=56)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"howtobench.errors.OutputError: cannot write the call cache {disk}/ws/calls.sqlite: "
                           "database or disk is full"), result.stderr
    assert "cannot rollback" not in result.stderr
