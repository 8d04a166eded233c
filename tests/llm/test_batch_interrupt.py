"""Ctrl-C under `--batch` (issue 34, item 5): calls waiting for a provider's batch are not on the wire, so the first
Ctrl-C ends their wait at once instead of waiting up to a day; the batch stays recorded and the same command
resumes it — nothing is submitted again."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from test_batch import job

from fake_batch_server import FakeBatchServer
from howtobench import interrupt
from howtobench.errors import Interrupted
from howtobench.llm.batch import BatchStore
from howtobench.steps.judge import judge_job
from judge_replies import server_handler


async def test_the_first_ctrl_c_ends_the_wait_for_a_batch_and_the_rerun_resumes_it(bench_root: Path,
                                                                                   tmp_path: Path) -> None:
    with FakeBatchServer(server_handler(), polls=10**9) as server:  # a batch that stays in progress
        running = asyncio.ensure_future(judge_job(job(bench_root, tmp_path, server.base_url)))
        while not server.created:
            await asyncio.sleep(0.02)
        started = time.monotonic()
        try:
            interrupt.request_drain()
            with pytest.raises(Interrupted, match="resumed, not submitted again"):
                await asyncio.wait_for(running, 10)
        finally:
            interrupt.reset()
        assert time.monotonic() - started < 5
        stored = BatchStore(tmp_path / "ws").load(server.base_url)
        assert [r["id"] for r in stored] == server.created  # recorded, not consumed
        server.polls = 1  # the provider finishes it
        judged = await judge_job(job(bench_root, tmp_path, server.base_url))
    assert [j.status for j in judged] == ["ok"] * 3
    assert len(server.created) == 1  # resumed, never submitted twice
