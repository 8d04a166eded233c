"""Issue 23, defects 3 and 4: a batch is never paid for twice, and one bad status poll never stops it.

3. A process killed while POST /batches awaits its reply used to leave no record: the provider had made (and
   billed) the batch, and the next run submitted the same requests again. Now the uploaded file is recorded as a
   pending submission first, and the next run finds the batch made from that file before creating one.
4. A transient 5xx on a status poll stopped a 24-hour batch at once; now polls back off and retry, and only a
   persistent failure stops (the stored batch is then resumed).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from fake_batch_server import FakeBatchServer
from howtobench.config import EndpointConfig
from howtobench.errors import TransientError
from howtobench.llm.batch import BatchSettings, BatchStore
from howtobench.llm.types import ChatRequest
from howtobench.steps.client import batch_client

FAST = BatchSettings(poll_s=0.02, quiet_s=0.1)
REQUEST = ChatRequest(messages=({"role": "user", "content": "写一首诗"},))


def endpoint(server: FakeBatchServer) -> EndpointConfig:
    return EndpointConfig(model="gpt-4o", base_urls=(server.base_url,), max_retries=2)


async def _until(condition: object, seconds: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition() and loop.time() < deadline:  # type: ignore[operator]
        await asyncio.sleep(0.02)


async def test_a_run_stopped_during_batch_creation_resumes_that_batch(tmp_path: Path) -> None:
    with FakeBatchServer(polls=1) as server:
        server.create_delay = 3.0  # the batch is made, but its id never reaches the client (cancelled first)
        async with batch_client(endpoint(server), workspace=tmp_path, settings=FAST) as client:
            call = asyncio.ensure_future(client.chat(REQUEST))
            await _until(lambda: server.created)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        [pending] = BatchStore(tmp_path).folder.glob("*.json")
        assert pending.name == "pending-file-1.json"
        assert json.loads(pending.read_text())["input_file_id"] == "file-1"

        server.create_delay = 0.0
        async with batch_client(endpoint(server), workspace=tmp_path, settings=FAST) as client:
            result = await client.chat(REQUEST)
    assert result.ok and result.text == "echo: 写一首诗"
    assert server.created == ["batch_2"] and len(server.uploads) == 1  # found by its file, not made again
    assert server.listings >= 1
    assert [p.name for p in BatchStore(tmp_path).folder.glob("*.json")] == ["batch_2.json"]


async def test_a_pending_submission_whose_batch_was_never_made_is_created_once(tmp_path: Path) -> None:
    """Killed after the upload, before POST /batches reached the provider: the next run creates the batch from the
    file already uploaded (no second upload)."""
    with FakeBatchServer(polls=1) as server:
        async with batch_client(endpoint(server), workspace=tmp_path, settings=FAST) as client:
            await client.chat(ChatRequest(messages=({"role": "user", "content": "first"},)))
        [done] = BatchStore(tmp_path).folder.glob("*.json")
        record = json.loads(done.read_text())
        done.unlink()
        pending = {**record, "id": f"pending-{record['input_file_id']}", "endpoint": "/v1/chat/completions"}
        pending.pop("consumed"), pending.pop("status")
        BatchStore(tmp_path).save(pending)
        server.batches.clear(), server.created.clear()  # as though POST /batches never arrived

        async with batch_client(endpoint(server), workspace=tmp_path, settings=FAST, cache_mode="off") as client:
            result = await client.chat(ChatRequest(messages=({"role": "user", "content": "first"},)))
    assert result.ok and result.text == "echo: first"
    assert len(server.created) == 1 and len(server.uploads) == 1


async def test_transient_status_errors_are_retried(tmp_path: Path) -> None:
    with FakeBatchServer(polls=1) as server:
        server.status_errors = 3
        async with batch_client(endpoint(server), workspace=tmp_path, settings=FAST) as client:
            result = await client.chat(REQUEST)
    assert result.ok and result.text == "echo: 写一首诗"
    assert server.status_checks >= 5 and len(server.created) == 1


async def test_a_persistent_status_failure_stops_and_keeps_the_batch(tmp_path: Path) -> None:
    settings = BatchSettings(poll_s=0.02, quiet_s=0.1, api_retries=2)
    with FakeBatchServer(polls=1) as server:
        server.status_errors = 1_000
        async with batch_client(endpoint(server), workspace=tmp_path, settings=settings) as client:
            with pytest.raises(TransientError, match="gave up after 3 attempts; the batch is stored"):
                await client.chat(REQUEST)
        [stored] = BatchStore(tmp_path).folder.glob("*.json")
        assert not json.loads(stored.read_text()).get("consumed")
        server.status_errors = 0
        async with batch_client(endpoint(server), workspace=tmp_path, settings=settings) as client:
            result = await client.chat(REQUEST)
    assert result.ok and server.created == ["batch_2"]
