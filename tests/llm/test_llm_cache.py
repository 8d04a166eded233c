"""The call log: named migrations run once, rows are committed as calls finish, two writers share one file."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

from llm_helpers import req

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.llm.cache import MIGRATIONS, CallRecord, CallStore, migrate, utc_now
from howtobench.llm.client import open_client


def test_migrations_are_recorded_and_run_once(tmp_path: Path) -> None:
    store = CallStore.open(tmp_path)
    assert migrate(store.db) == []  # already applied by open()
    names = [r[0] for r in store.db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == [name for name, _ in MIGRATIONS]
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    store.close()


async def test_write_commits_before_returning(tmp_path: Path) -> None:
    store = CallStore.open(tmp_path)
    await store.write(CallRecord(key="k", run_id="r", purpose="p", model="m", status="ok", started_at=utc_now(),
                                 request='{"a": 1}', response={"ok": True, "text": "t"}))
    other = sqlite3.connect(tmp_path / "calls.sqlite")  # another connection sees it at once
    assert other.execute("SELECT key, request_json, response_json FROM calls").fetchall() == [
        ("k", '{"a": 1}', '{"ok":true,"text":"t"}')]
    assert store.lookup("k") == {"ok": True, "text": "t"}
    store.close()


async def test_two_clients_share_one_workspace(fake_server: FakeServer, endpoint: EndpointConfig,
                                               tmp_path: Path) -> None:
    async with open_client(endpoint, workspace=tmp_path, run_id="a") as one, \
            open_client(endpoint, workspace=tmp_path, run_id="b") as two:
        await asyncio.gather(*(c.chat(req(f"q{i}")) for i in range(30) for c in (one, two)))
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM calls").fetchone() == (60, 30)
    assert len(fake_server.requests) <= 60


def _open_in_step(folders: list[str], barrier: Any, failures: Any) -> None:
    """Open each folder's store at the same instant as the other processes (a multiprocessing target)."""
    for folder in folders:
        barrier.wait()
        try:
            CallStore.open(Path(folder)).close()
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which asserts there were none
            failures.put(f"{folder}: {exc}")


def test_processes_opening_a_new_workspace_at_once_all_succeed(tmp_path: Path) -> None:
    """Two runs with different outputs on one new workspace: switching the new file to WAL raced, and SQLite
    answered "database is locked" at once instead of waiting (test_locks.py failed now and then)."""
    ctx = multiprocessing.get_context("spawn")
    folders = [str(tmp_path / f"ws{i}") for i in range(20)]
    barrier, failures = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=_open_in_step, args=(folders, barrier, failures)) for _ in range(3)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0]
    assert failures.empty(), failures.get()
    for folder in folders:
        db = sqlite3.connect(Path(folder) / "calls.sqlite")
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        db.close()
