"""Acceptance: faults of every kind end in a valid reply or an explicit failure; a killed batch resumes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from llm_helpers import FAST_RETRY, SCORE_SCHEMA, req

from fake_server import FakeServer, Reply, fault_handler
from howtobench.config import EndpointConfig
from howtobench.llm.client import open_client

WORKER = Path(__file__).with_name("batch_worker.py")


def item_of(body: dict[str, Any]) -> int:
    return int(body["messages"][0]["content"].split()[-1])


def truthful(body: dict[str, Any]) -> Reply:
    """The one valid answer for an item, so any other value in a result would have been invented."""
    i = item_of(body)
    return Reply.json({"score": i % 10 + 1, "reason": f"item {i}"})


async def test_500_calls_with_20_percent_faults(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = fault_handler(0.2, seed=7, base=truthful)
    # 2 s: a loaded machine can starve the in-process server for a second; a request the server never read
    # is then an attempt it cannot count
    endpoint = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=2.0, concurrency=32)
    async with open_client(endpoint, workspace=tmp_path, retry=FAST_RETRY, seed=1) as client:
        results = await asyncio.gather(*(
            client.chat(req(f"item {i}", response_schema=SCORE_SCHEMA, purpose="leaf")) for i in range(500)))
    validator = Draft202012Validator(SCORE_SCHEMA)
    for i, result in enumerate(results):
        if result.ok:
            assert result.data == {"score": i % 10 + 1, "reason": f"item {i}"}
            validator.validate(result.data)
        else:
            assert result.data is None and result.error, result
    assert sum(r.ok for r in results) >= 495
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    attempts, asks, rows = db.execute("SELECT SUM(attempts), SUM(asks), COUNT(*) FROM calls").fetchone()
    assert rows == 500 and attempts == len(fake_server.requests)  # every HTTP attempt is accounted for
    assert attempts - asks > 40  # retries after 429/500/timeouts/drops/truncated bodies
    assert asks > 500  # re-asks after truncated JSON and out-of-range scores
    reasked = [b for b in fake_server.requests if len(b["messages"]) > 1]
    assert reasked and all(b["messages"][-2]["role"] == "assistant" for b in reasked)


def _finished_items(workspace: Path) -> set[int]:
    db = sqlite3.connect(workspace / "calls.sqlite")
    rows = db.execute("SELECT request_json FROM calls WHERE status = 'ok' AND from_cache = 0").fetchall()
    return {item_of(json.loads(r[0])) for r in rows}


def _run_worker(server: FakeServer, workspace: Path, out: Path, n: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(WORKER), server.base_url, str(workspace), str(n), str(out)])


def test_sigkill_then_resume_repeats_no_finished_call(fake_server: FakeServer, tmp_path: Path) -> None:
    n = 120
    fake_server.handler = truthful
    fake_server.latency = 0.03
    workspace, out = tmp_path / "ws", tmp_path / "resumed.json"
    proc = _run_worker(fake_server, workspace, out, n)
    deadline = time.monotonic() + 60
    while len(fake_server.requests) < n // 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    finished = _finished_items(workspace)
    seen_before = len(fake_server.requests)
    assert 0 < len(finished) < n

    assert _run_worker(fake_server, workspace, out, n).wait(60) == 0
    after = Counter(item_of(b) for b in fake_server.requests[seen_before:])
    assert not finished & set(after), "a call finished before the kill was sent again"
    assert set(after) | finished == set(range(n))

    fresh_out = tmp_path / "fresh.json"
    assert _run_worker(fake_server, tmp_path / "fresh", fresh_out, n).wait(60) == 0
    assert json.loads(out.read_text()) == json.loads(fresh_out.read_text())
    assert len(json.loads(out.read_text())) == n
