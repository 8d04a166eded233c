"""The call log's rows queued in one turn of the event loop reach the writer thread together (one commit), and a
row queued by a call cancelled before that turn ended is still committed when the store closes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import howtobench.llm.cache as cache
from howtobench.llm.cache import CallRecord, CallStore, utc_now


def row(key: str) -> CallRecord:
    return CallRecord(key=key, run_id="r", purpose="p", model="m", status="ok", started_at=utc_now(),
                      response='{"ok": true}')


def keys_in(store: CallStore) -> list[str]:
    return [r["key"] for r in store.rows("SELECT key FROM calls ORDER BY id")]


async def test_rows_of_one_turn_are_committed_together_and_in_order(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real = cache._commit_batch

    def counted(db: Any, batch: list[Any], path: Path) -> None:
        sizes.append(len(batch))
        real(db, batch, path)

    monkeypatch.setattr(cache, "_commit_batch", counted)
    store = CallStore.open(tmp_path)
    try:
        await asyncio.gather(*(store.write(row(f"k{i}")) for i in range(20)))  # all queued in one turn
        await store.write(row("alone"))
        assert keys_in(store) == [f"k{i}" for i in range(20)] + ["alone"]
    finally:
        store.close()
    assert sizes == [20, 1]


async def test_a_row_queued_by_a_cancelled_call_is_committed_on_close(tmp_path: Path) -> None:
    store = CallStore.open(tmp_path)
    writing = asyncio.ensure_future(store.write(row("cancelled")))
    await asyncio.sleep(0)  # the row is queued; its hand-over waits for the next turn
    writing.cancel()
    store.close()  # before that turn (a loop stopping now would never run it)
    with pytest.raises(asyncio.CancelledError):
        await writing
    reopened = CallStore.open(tmp_path)
    try:
        assert keys_in(reopened) == ["cancelled"]
    finally:
        reopened.close()
