"""The call log: named migrations run once, rows are committed as calls finish, two writers share one file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

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
