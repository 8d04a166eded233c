"""One process per output: an exclusive lock on each output file or folder while a command writes it.

Two `judge` processes on the same output used to both run: every call paid twice, every judgment written
twice. Now the first takes `output_lock(path)` — an `flock` on a small file next to the output
(`.<name>.lock`; inside a folder output, `<folder>/.howtobench.lock`) holding its pid, host, start time and
command — and the second refuses at once with an `OutputError` naming that holder (exit status 2).

One output has one lock however it is named: the lock is taken on the resolved path (a symlink to an output
locks the output). A run directory is locked as a whole: a file output inside a folder whose lock file exists
(a `run` is writing it, or was killed while it did) takes that folder's lock as well, and a folder lock is
refused while a file lock inside the folder is held — so `judge -o runs/x/judgments/tow.jsonl` and
`run --name x` never write the same judgments at once, whichever starts first.

The operating system drops an flock when its process dies, however it dies, so a lock is never stuck: a
process killed with SIGKILL leaves its lock file behind, and the next process takes it over and says so.
A finished process removes its lock file. After taking the flock we check that the file is still the one
at the path (another process may have removed it meanwhile), so two processes never both hold one output.

Different outputs may share a workspace: the call cache is SQLite in WAL mode with a busy timeout, made
for several writers. A scoring server is another matter: `serve_lock` keeps one `serve` per workspace
(`<workspace>/.serve.lock`), since two servers fed the same samples would both send their calls while both are in
flight, and pay twice. flock is advisory and local: it does not guard against processes on other machines
writing one network folder.

POSIX only: flock comes from `fcntl`, which Linux and macOS have and Windows has not. On Windows the package
still imports (reports, `list`, the library's scoring), and a command that writes an output stops before it
writes anything with one line, `NEEDS_POSIX` (a ConfigError, exit status 2), instead of an ImportError
traceback; WSL is a POSIX system.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from howtobench.errors import ConfigError, OutputError
from howtobench.outputs import writing
from howtobench.redact import redact_text

try:
    import fcntl
except ImportError:  # not a POSIX system (Windows): `output_lock` refuses with NEEDS_POSIX
    HAS_FLOCK = False
else:
    HAS_FLOCK = True

NEEDS_POSIX = ("howtobench needs a POSIX system (Linux, macOS; on Windows: WSL) for the file locks that keep two "
               "processes off one output (fcntl.flock is missing here)")
log = logging.getLogger(__name__)
DIR_LOCK = ".howtobench.lock"
_HELD: set[Path] = set()  # lock files this process holds (a lock inside one it holds is no conflict)


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


def _acquire(path: Path, output: Path, busy: Callable[[str], str] | None = None) -> int:
    """An fd holding the flock of `path` (a lock file that is still the one at `path`), or OutputError (its line
    from `busy(the holder described)` when given)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            if busy is not None:
                raise OutputError(busy(_describe(holder))) from None
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
    """Hold the exclusive lock of `output` (a file, or a folder with `folder`) for the block, and of the locked
    folders around it (see the module docstring); refuse with an OutputError naming the holder if another process
    holds one of them, or (for a folder) a file lock inside it. A ConfigError (`NEEDS_POSIX`) where there is no
    flock, before any lock file is made."""
    if not HAS_FLOCK:
        raise ConfigError(NEEDS_POSIX)
    with contextlib.ExitStack() as held:
        resolved = output.resolve()
        # the path as given when no symlink is on it (the same lock file, and messages name what the user wrote)
        target = output if Path(os.path.abspath(output)) == resolved else resolved
        for outer in _locked_folders_around(resolved):
            held.enter_context(_one_lock(outer, outer, folder=True))
        held.enter_context(_one_lock(target, output, folder=folder))
        if folder:
            _refuse_busy_files_inside(resolved, output)
        yield


def _locked_folders_around(output: Path) -> list[Path]:
    """The folders above `output` that hold a folder lock file (a run directory being written), outermost first."""
    return [parent for parent in reversed(output.parents)
            if (parent / DIR_LOCK).is_file() and parent / DIR_LOCK not in _HELD]


def _refuse_busy_files_inside(folder: Path, shown: Path) -> None:
    """OutputError when a process holds the lock of a file output inside `folder` (a `judge -o` into it)."""
    for path in folder.rglob(".*.lock"):
        if path.name == DIR_LOCK or path in _HELD:
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            raise OutputError(f"{shown} is in use: {path.parent / path.name[1:-5]} inside it is being written by "
                              f"another howtobench process ({_describe(holder)}); wait for it to finish or choose "
                              "another output") from None
        finally:
            os.close(fd)


@contextlib.contextmanager
def serve_lock(workspace: Path) -> Iterator[None]:
    """One `serve` per workspace (`<workspace>/.serve.lock`): a second server there would send the same calls as
    the first while both are in flight, and pay for them twice; it refuses at once, naming the first."""
    if not HAS_FLOCK:
        raise ConfigError(NEEDS_POSIX)

    def busy(holder: str) -> str:
        return (f"workspace {workspace} is served by another howtobench serve ({holder}): two servers on one "
                "workspace pay twice for the calls both have in flight; stop that one, or give this one its own "
                "--workspace")

    with _one_lock(workspace.resolve() / "serve", workspace, folder=False, busy=busy):
        yield


@contextlib.contextmanager
def _one_lock(output: Path, shown: Path, *, folder: bool, busy: Callable[[str], str] | None = None) -> Iterator[None]:
    """The flock of one output (`shown`: the path the user gave, for messages; `busy`: the refusal's line)."""
    path = lock_path(output, folder=folder)
    with writing(shown):  # a lock that cannot be written is the output that cannot be written, for the user
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(path, shown, busy)
    try:
        left = _read_holder(fd)
        if left:
            log.warning("took over the lock of %s left by %s, which is no longer running", shown, _describe(left))
        with writing(shown):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(_holder(), ensure_ascii=False).encode("utf-8"))
        _HELD.add(path)
        yield
    finally:
        _HELD.discard(path)
        with contextlib.suppress(OSError):
            path.unlink()  # still ours: nobody else can hold it while we do
        os.close(fd)
