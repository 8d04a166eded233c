"""Writing output files: every filesystem failure becomes one `OutputError` line naming the path.

A folder that is a file, a directory given as `-o`, a read-only folder, a full disk: Python raises an OSError
with a traceback the user cannot act on. Commands write their outputs through these helpers (`AppendOnly` for
the files that grow as work finishes, `write_text_atomic` for the ones replaced whole, or inside
`writing(path)`), so what the user sees is `error: cannot write PATH: the disk is full` and exit status 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from howtobench.errors import OutputError

_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "it is a directory, not a file",
}
_PARENT_IS_A_FILE = (errno.ENOTDIR, errno.EEXIST)


def _cause(exc: OSError) -> str:
    return _HINTS.get(exc.errno or 0) or exc.strerror or str(exc)


def read_cause(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, in words ("No such file or directory", "not UTF-8 text ..."), without
    Python's `[Errno 2] ... 'path'` repetition: the caller's message names the file already."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
    return _cause(exc)


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest folder of `path`'s that is a file (so nothing can be created under it)."""
    return next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)


def output_error(path: Path, exc: OSError) -> OutputError:
    """The one-line error for a failed write of `path` (the path the user named, and the cause in words)."""
    if exc.errno in _PARENT_IS_A_FILE and (blocker := _file_in_the_way(path)) is not None:
        return OutputError(f"cannot write {path}: {blocker} is a file, not a folder")
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return OutputError(f"cannot write {path}: {_cause(exc)}{where}")


def os_error_line(exc: OSError) -> str:
    """One line for an OSError that reached the command line unexplained: the file(s) and the cause."""
    files = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f)
    return f"{files}: {_cause(exc)}" if files else _cause(exc)


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an OSError raised inside the block into an OutputError naming `path`."""
    try:
        yield
    except OSError as exc:
        raise output_error(path, exc) from exc


def refuse_non_regular(path: Path) -> None:
    """OutputError when `path` exists and is not a regular file (/dev/full, a pipe, a socket): an output is read
    back to resume, and reading /dev/full never ends."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise OutputError(f"cannot write {path}: it is not a regular file (a device, pipe or socket); outputs are "
                          "files the next run reads back to resume: give a file path")


def output_file(path: Path) -> Path:
    """`path` as an output file, checked before anything is read from or written to it: not a directory nor any
    other non-regular file, and its folder (created if missing) is a folder."""
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory; give a file name inside it, such as "
                          f"{path / 'out.jsonl'}")
    refuse_non_regular(path)
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def undone_if_empty(path: Path) -> Iterator[None]:
    """Remove the folders up to `path` that this block created, when it fails and leaves them empty: a run whose
    preflight failed left an empty `runs/<name>/` behind (its lock file goes on release), which looked like a
    run. A folder that existed before, or holds anything, stays."""
    made = [p for p in (path, *path.parents) if not p.exists()]
    try:
        yield
    except BaseException:
        for folder in made:  # innermost first; rmdir refuses a folder with anything in it
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def output_dir(path: Path) -> Path:
    """`path` as an output folder (created if missing); a file in its place is an OutputError."""
    with writing(path):
        path.mkdir(parents=True, exist_ok=True)
    return path


class AppendOnly:
    """An output file that grows as work finishes: every write is flushed at once (a kill loses nothing
    written), and any failure — open, write, fsync, close — is an OutputError naming the file."""

    def __init__(self, path: Path) -> None:
        self.path = output_file(path)
        with writing(path):
            self._handle = path.open("a", encoding="utf-8")

    def write(self, text: str) -> None:
        with writing(self.path):
            self._handle.write(text)
            self._handle.flush()

    def sync(self) -> None:
        """Flush to the disk itself (fsync), so the lines survive a power cut too."""
        with writing(self.path):
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle.closed:
            return
        try:
            with writing(self.path):
                self._handle.close()
        finally:
            if not self._handle.closed:  # the final flush failed: drop the unwritten rest, release the file
                with contextlib.suppress(OSError):
                    os.close(self._handle.fileno())

    def __enter__(self) -> AppendOnly:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
            return
        with contextlib.suppress(OutputError):  # the error already on its way says it better
            self.close()


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step (a temporary file renamed over it): a crash or a full disk
    leaves the old file whole, never half of the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with writing(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
