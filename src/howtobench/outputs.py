"""Writing output files: every filesystem failure becomes one `OutputError` line naming the path.

A folder that is a file, a directory given as `-o`, a read-only folder, a full disk: Python raises an OSError
with a traceback the user cannot act on. Every command writes its outputs through these helpers (or inside
`writing(path)`), so what the user sees is `error: cannot write PATH: No space left on device` and exit status 2.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from howtobench.errors import OutputError

_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "it is a directory, not a file",
    errno.ENOTDIR: "a parent of it is a file, not a folder",
    errno.EEXIST: "a parent of it is a file, not a folder",
}


def output_error(path: Path, exc: OSError) -> OutputError:
    """The one-line error for a failed write of `path` (the path the user named, and the cause in words)."""
    cause = _HINTS.get(exc.errno or 0) or exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return OutputError(f"cannot write {path}: {cause}{where}")


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an OSError raised inside the block into an OutputError naming `path`."""
    try:
        yield
    except OSError as exc:
        raise output_error(path, exc) from exc


def ensure_parent(path: Path) -> None:
    """Create the folder `path` will be written in."""
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)


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
