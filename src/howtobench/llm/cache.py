"""The call log and content-addressed cache: one SQLite file per workspace (`<workspace>/calls.sqlite`).

Every finished call — success or failure, fresh or served from the cache, or a call that stopped the run with
a run-level error (status "stopped": 401, nothing answering, a replay miss...) — is one row, written
and committed the moment the call finishes, so a run killed with SIGKILL loses at most the
calls that were still in flight. WAL mode lets several processes read and write the same file.

Writes go through one writer thread (`await store.write(call)`): a commit waits on the disk
(~0.2-0.7 ms here), which would otherwise stall the event loop on every call; the thread
commits whatever has queued up in one transaction (group commit) and only then lets the
awaiting call return its result, so a caller never holds a result that is not yet durable.

The schema grows only by appending named migrations to `MIGRATIONS` (as simonw/llm does); a
migration that ran is recorded in `_migrations` and never runs again. Never edit one that shipped.

No secret is ever written: the stored request is the JSON body sent to the server (no headers).

A file that cannot be opened or written (read-only folder, full disk) is an `OutputError` naming it, with
SQLite's own words ("database or disk is full"): a failed ROLLBACK after such an error (SQLite may already
have rolled back itself) never replaces the error that explains it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from howtobench.errors import OutputError
from howtobench.outputs import output_dir
from howtobench.redact import redact_text

DB_NAME = "calls.sqlite"
STOPPED = "stopped"  # the status of a call that raised a run-level error (errors.py): no answer to cache
LOW_DISK_BYTES = 16 * 1024 * 1024
BUSY_TIMEOUT_S = 30.0  # how long a process waits for another that holds the file


def _m001_calls(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE calls (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL,
            run_id TEXT NOT NULL,
            purpose TEXT NOT NULL,
            model TEXT NOT NULL,
            endpoint TEXT,
            request_json TEXT,
            response_json TEXT,
            status TEXT NOT NULL,
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            asks INTEGER NOT NULL DEFAULT 0,
            from_cache INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cached_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX calls_key ON calls (key, status)")
    db.execute("CREATE INDEX calls_run ON calls (run_id, purpose)")


def _m002_answers(db: sqlite3.Connection) -> None:
    """Replies that came back but did not pass validation, kept the moment they are read: a run killed during the
    re-asks that follow finds them again instead of paying for them again (`CallStore.answer`)."""
    db.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, response_json TEXT NOT NULL, stored_at TEXT NOT NULL)")


MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("m001_calls", _m001_calls),
    ("m002_answers", _m002_answers),
]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class CallRecord:
    """One finished call, as stored."""

    key: str
    run_id: str
    purpose: str
    model: str
    status: str  # "ok" | "failed" (writing-level) | STOPPED (a run-level error: the run stopped on this call)
    started_at: str
    endpoint: str | None = None
    request: dict[str, Any] | str | None = None  # the body sent (dict or its JSON text)
    response: dict[str, Any] | str | None = None
    error: str | None = None
    attempts: int = 0
    asks: int = 0
    from_cache: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    finished_at: str = ""


_COLUMNS = [
    "key", "run_id", "purpose", "model", "endpoint", "request_json", "response_json", "status", "error", "attempts",
    "asks", "from_cache", "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "latency_s",
    "started_at", "finished_at",
]
_INSERT = f"INSERT INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
_INSERT_ANSWER = "INSERT OR REPLACE INTO answers (key, response_json, stored_at) VALUES (?, ?, ?)"


def _dumps(value: dict[str, Any] | str | None) -> str | None:
    """JSON text of a dict; text that already is JSON passes through (the client serialised it once already)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CallStore:
    """Open with `CallStore.open(workspace)`. Reads on the caller's thread; writes via `write` (async) or `record`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.db = _connect(path)
            migrate(self.db)
        except sqlite3.Error as exc:
            raise store_error(path, exc) from exc
        self._queue: queue.SimpleQueue[list[_Queued] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._pending: list[_Queued] = []  # rows queued on the loop this turn, handed over together
        self._pending_loop: asyncio.AbstractEventLoop | None = None  # the loop whose turn will hand them over

    @classmethod
    def open(cls, workspace: Path) -> CallStore:
        return cls(output_dir(workspace) / DB_NAME)

    @classmethod
    def report(cls, workspace: Path, select: str, rest: str, run_id: str | None, where: str = "1"
               ) -> list[sqlite3.Row]:
        """`SELECT ... FROM calls WHERE <where> [AND run_id = ?] <rest>` on the workspace's log, opened and closed
        here: the reports of `llm usage` (usage, cost per mode, run-level errors) share one filter by run."""
        cond, params = (f"({where}) AND run_id = ?", (run_id,)) if run_id else (where, ())
        store = cls.open(workspace)
        try:
            return store.rows(f"{select} FROM calls WHERE {cond} {rest}", params)
        finally:
            store.close()

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The stored response of the latest successful, fresh call with this key."""
        row = self.db.execute(
            "SELECT response_json FROM calls WHERE key = ? AND status = 'ok' AND from_cache = 0 "
            "ORDER BY id DESC LIMIT 1",
            (key,),
        ).fetchone()
        return None if row is None or row[0] is None else dict(json.loads(row[0]))

    def has_request(self, key: str) -> bool:
        """True when a row of this key already holds the request body: a failed call tried again by each run stores
        its body once (a too-long writing's prompt is large), not once per run."""
        row = self.db.execute("SELECT 1 FROM calls WHERE key = ? AND request_json IS NOT NULL LIMIT 1", (key,))
        return row.fetchone() is not None

    def has_answers(self) -> bool:
        """True when any reply was kept by `write_answer` (until then no call needs to look one up)."""
        return bool(self.db.execute("SELECT EXISTS (SELECT 1 FROM answers)").fetchone()[0])

    def answer(self, key: str) -> dict[str, Any] | None:
        """A reply kept by `write_answer` (one that failed validation and was re-asked), or None."""
        row = self.db.execute("SELECT response_json FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def record(self, call: CallRecord) -> None:
        """Insert and commit now, on this thread (autocommit): the row survives a SIGKILL right after."""
        self.db.execute(_INSERT, _params(call))

    async def write(self, call: CallRecord) -> None:
        """Insert via the writer thread; returns once the row is committed.

        The row is queued before the first await: a caller cancelled while it waits (Ctrl-C) still has it
        committed, by `close`."""
        # the row's values are made here, on the loop: the writer thread then runs almost only SQLite's C code
        # (which releases the GIL), so it seldom holds the GIL the event loop wants back after a socket call
        await self._enqueue(_INSERT, _params(call))

    async def write_answer(self, key: str, response: dict[str, Any]) -> None:
        """Keep one reply under its ask's key (see `_m002_answers`); returns once it is committed."""
        await self._enqueue(_INSERT_ANSWER, (key, _dumps(response), utc_now()))

    async def drop_answers(self, keys: list[str]) -> None:
        """Forget the replies kept for a call whose chain has ended (its row is logged): a later call with the same
        key — `--redo-failed`, or `--no-cache`'s fresh ask — must ask again, not replay the invalid replies."""
        await asyncio.gather(*(self._enqueue("DELETE FROM answers WHERE key = ?", (key,)) for key in keys))

    async def _enqueue(self, sql: str, row: _Row) -> None:
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="howtobench-call-log", daemon=True)
            self._writer.start()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        if self._pending_loop is not loop:
            self._hand_over()  # rows of another loop (one closed before it could hand them over) go first
            self._pending_loop = loop
            loop.call_soon(self._hand_over)
        self._pending.append((sql, row, done))
        await done

    def _hand_over(self) -> None:
        """Give the writer thread every row queued since the last hand-over, as one batch.

        Why per turn of the loop and not per row: the thread is woken once for all the calls that finished in the
        same turn (a burst of replies), not once per row; each wake-up takes the GIL from the loop, and SQLite then
        commits them together. A row waits at most for the end of the turn it was queued in."""
        batch, self._pending, self._pending_loop = self._pending, [], None
        if batch:
            self._queue.put(batch)

    def _write_loop(self) -> None:
        db = _connect(self.path)
        try:
            while True:
                first = self._queue.get()
                if first is None:
                    return
                batch = list(first)
                stop = False
                while not self._queue.empty():
                    more = self._queue.get_nowait()
                    if more is None:
                        stop = True
                        break
                    batch += more
                _commit_batch(db, batch, self.path)
                if stop:
                    return
        finally:
            db.close()

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Read-only helper for reports."""
        cur = self.db.execute(sql, params)
        cur.row_factory = sqlite3.Row
        return list(cur.fetchall())

    def close(self) -> None:
        """Finish queued writes, then close."""
        if self._writer is not None:
            self._hand_over()  # rows queued in a turn that never ended (the loop stopped): committed too
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        self.db.close()


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    _use_wal(db)
    db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process; cheap commits
    db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return db


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch to WAL, retrying while another process holds the file: two processes opening a new workspace at
    once (two runs with different outputs) made one fail with "database is locked" at once — SQLite does not
    wait out its busy timeout for this pragma (measured: 105 of 150 three-way races on a new file)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


_Row = tuple[Any, ...]  # the values of one INSERT, in `_COLUMNS` order
_Queued = tuple[str, _Row, asyncio.Future[None]]  # an INSERT, its values, and who waits for its commit


def _params(call: CallRecord) -> _Row:
    return (
        call.key, call.run_id, call.purpose, call.model, call.endpoint, _dumps(call.request),
        _dumps(call.response), call.status, None if call.error is None else redact_text(call.error),
        call.attempts, call.asks, int(call.from_cache), call.prompt_tokens, call.completion_tokens,
        call.cached_tokens, call.cost_usd, call.latency_s,
        call.started_at, call.finished_at or utc_now(),
    )


def _commit_batch(db: sqlite3.Connection, batch: list[_Queued], path: Path) -> None:
    """One transaction for the batch, then wake each waiter on its own loop (one wake-up per loop)."""
    error: BaseException | None = None
    try:
        db.execute("BEGIN IMMEDIATE")
        for sql in dict.fromkeys(sql for sql, _, _ in batch):  # the call rows in one executemany, in order
            db.executemany(sql, [row for each, row, _ in batch if each == sql])
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        error = store_error(path, exc)
        _rollback(db)
    loops: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for _, _, fut in batch:
        loops.setdefault(fut.get_loop(), []).append(fut)
    for loop, futures in loops.items():
        with contextlib.suppress(RuntimeError):  # that loop is already closed: nobody is waiting any more
            loop.call_soon_threadsafe(_settle, futures, error)


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for fut in futures:
        if fut.done():
            continue
        if error is None:
            fut.set_result(None)
        else:
            fut.set_exception(error)


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet applied, in order, inside one immediate transaction; return their names."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    applied_now: list[str] = []
    db.execute("BEGIN IMMEDIATE")  # serialises concurrent first opens of the same file
    try:
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
        for name, step in MIGRATIONS:
            if name not in done:
                step(db)
                db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, utc_now()))
                applied_now.append(name)
        db.execute("COMMIT")
    except BaseException:
        _rollback(db)
        raise
    return applied_now


def _rollback(db: sqlite3.Connection) -> None:
    """Undo an open transaction; after SQLITE_FULL / IOERR SQLite may have rolled back already, and an error of
    the ROLLBACK itself must not hide the one that explains what happened."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def store_error(path: Path, exc: sqlite3.Error) -> OutputError:
    """The call cache cannot be used: name the file and SQLite's reason (e.g. "database or disk is full"), and
    the free space when the disk is nearly full (SQLite sometimes calls that a "disk I/O error")."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        free = None
    low = f" ({free:,} bytes free on its disk)" if free is not None and free < LOW_DISK_BYTES else ""
    return OutputError(f"cannot write the call cache {path}: {exc}{low}")
