"""`howtobench.score` / `ascore`: one writing, with an open client or an endpoint, with or without reference."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import howtobench
from fake_server import FakeServer, Reply, default_handler
from howtobench.config import EndpointConfig
from howtobench.llm.client import open_client


def handler(request: dict) -> Reply:
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "weights":
        groups = schema["schema"]["properties"]
        return Reply.json({g: {leaf: 1 / len(s["required"]) for leaf in s["required"]} for g, s in groups.items()})
    if schema.get("name") == "leaf_score":
        return Reply.json({"reason": "fine", "score": schema["schema"]["properties"]["score"]["enum"][-1]})
    return default_handler(request)


async def test_ascore_with_an_open_client(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    async with open_client(endpoint, workspace=tmp_path) as client:
        text = "第一段。\n\n第二段。"
        judgment = await howtobench.ascore("写一篇短文", text, reference="范文：山高水长。", judge=client)
    assert judgment.status == "ok" and judgment.score == pytest.approx(10.0)  # every leaf at its top value
    assert judgment.meta["reference"] is True and judgment.item_id.startswith("adhoc-")
    assert any("山高水长" in str(r["messages"]) for r in fake_server.requests)


def test_score_sync_reference_free_with_an_endpoint(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    judgment = howtobench.score("写一篇短文", "正文。", judge=endpoint, workspace=tmp_path, task="completion")
    assert judgment.meta["reference"] is False and set(judgment.nodes) == {"content", "impression"}
    assert not any("参考范文" in str(r["messages"]) for r in fake_server.requests)


async def test_score_inside_a_running_loop_points_to_ascore() -> None:
    with pytest.raises(RuntimeError, match="ascore"):
        howtobench.score("x", "y")
    await asyncio.sleep(0)
