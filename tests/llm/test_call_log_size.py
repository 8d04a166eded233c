"""Issue 23, defect 6 (call log): a failed call's request body is stored once, not once per run.

A writing too long for the judge fails each time a run tries it again; each failed row held the whole prompt,
so re-runs of a too-long writing stored 105 MB of the same request in the call log.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from llm_helpers import FAST_RETRY, req

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.llm.client import open_client


async def test_a_failed_calls_body_is_logged_once(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda body: Reply.error(400, "This model's maximum context length is 8 tokens")
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), timeout_s=5)
    for _ in range(3):
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            result = await client.chat(req("a very long writing " * 100))
        assert not result.ok and (result.error or "").startswith("ContextTooLong")
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    bodies = [row[0] for row in db.execute("SELECT request_json FROM calls WHERE status = 'failed' ORDER BY id")]
    assert len(bodies) == 3 and bodies[0] is not None and "a very long writing" in bodies[0]
    assert bodies[1:] == [None, None]
