"""One process per output: an exclusive lock on each output file or folder while a command writes it.

Two `judge` processes on the same output used to both run: every call paid twice, every judgment written
twice. Now the first takes `output_lock(path)` — an `flock` on a small file next to the output
(`.<name>.lock`; inside a folder output, `<folder>/.howtobench.lock`) holding its pid, host, start time and
command — and the second refuses at once with an `OutputError` naming that holder (exit status 2).

The operating system drops an flock when its process dies, however it dies, so a lock is never stuck: a
process killed with SIGKILL leaves its lock file behind, and the next process takes it over and says so.
A finished process removes its lock file. After taking the flock we check that the file is still the one
at the path (another process may have removed it meanwhile), so two processes never both hold one output.

Different outputs may share a workspace: the call cache is SQLite in WAL mode with a busy timeout, made
for several writers. flock is advisory and local: it does not guard against processes on other machines
writing one network folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from howtobench.errors import OutputError
from howtobench.outputs import writing
from howtobench.redact import redact_text

log = logging.getLogger(__name__)
DIR_LOCK = ".howtobench.lock"


def lock_path(output: Path, *, folder: bool) -> Path:
    """Where the lock of `output` lives: inside a folder output, next to a file output."""
    return output / DIR_LOCK if folder else output.with_name(f".{output.name}.lock")


def _holder() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": redact_text(" ".join(["howtobench", *sys.argv[1:]]) if sys.argv else "howtobench"),
    }


def _describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "a process that left no details"
    command = f", `{holder['command']}`" if holder.get("command") else ""
    return f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started_at')}{command}"


def _read_holder(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 65536)
    try:
        found = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError):
        found = {}
    return found if isinstance(found, dict) else {}


def _acquire(path: Path, output: Path) -> int:
    """An fd holding the flock of `path` (a lock file that is still the one at `path`), or OutputError."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise OutputError(
                f"{output} is in use by another howtobench process ({_describe(holder)}); wait for it to finish "
                f"or choose another output (lock file {path})"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # its holder removed the file between our open and our flock: lock the new one


@contextlib.contextmanager
def output_lock(output: Path, *, folder: bool = False) -> Iterator[None]:
    """Hold the exclusive lock of `output` (a file, or a folder with `folder`) for the block; refuse with an
    OutputError naming the holder if another process holds it."""
    path = lock_path(output, folder=folder)
    with writing(output):  # a lock that cannot be written is the output that cannot be written, for the user
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(path, output)
    try:
        left = _read_holder(fd)
        if left:
            log.warning("took over the lock of %s left by %s, which is no longer running", output, _describe(left))
        with writing(output):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(_holder(), ensure_ascii=False).encode("utf-8"))
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # still ours: nobody else can hold it while we do
        os.close(fd)
