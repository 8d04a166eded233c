"""Real calls through open_client to the embedded llama.cpp server with the Gemma-3-270M GGUF."""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest, SamplingParams

pytestmark = pytest.mark.local_model

SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}


async def test_local_model_answers_text_and_schema(tmp_path: Path) -> None:
    from howtobench.llm.local import LOCAL_MODEL, _healthy, local_endpoint
    from howtobench.llm.transport import new_session

    async with local_endpoint(quiet=True) as endpoint:
        assert endpoint.model == LOCAL_MODEL
        async with open_client(endpoint, workspace=tmp_path) as client:
            text = await client.chat(ChatRequest(
                messages=({"role": "user", "content": "用一句话介绍杭州。"},),
                sampling=SamplingParams(max_tokens=24), purpose="smoke"))
            scored = await client.chat(ChatRequest(
                messages=({"role": "user", "content": "Rate this sentence from 1 to 3: 'The cat sat.'"},),
                sampling=SamplingParams(max_tokens=16), response_schema=SCHEMA, purpose="smoke"))
        server = endpoint.base_urls[0]
    assert text.ok and text.text and text.usage.completion_tokens > 0 and text.endpoint == server
    assert scored.ok and scored.data is not None and scored.data["score"] in (1, 2, 3)
    async with new_session() as http:
        assert not await _healthy(http, server)  # stopped on exit


async def test_server_that_dies_at_start_is_reported_with_its_log(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from howtobench.errors import LLMError
    from howtobench.llm import local

    monkeypatch.setattr(local, "model_file", lambda: tmp_path / "model.gguf")
    dying = [sys.executable, "-c", "print('boom'); raise SystemExit(3)"]
    monkeypatch.setattr(local, "server_command", lambda *_a: dying)
    with pytest.raises(LLMError, match="exited with code 3") as info:
        async with local.local_endpoint(quiet=True):
            pass
    assert "boom" in str(info.value)
