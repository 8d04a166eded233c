"""Shared helpers of the construction tests (a uniquely named module, importable from any test file)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.llm.client import OpenAIClient, open_client

FIXTURES = Path(__file__).parent / "fixtures"

ZH_TEXT = "\n\n".join([
    "清晨的菜市场总是最热闹的地方，卖菜的阿婆把青菜码得整整齐齐。",
    "鱼摊前围着几个老人，他们一边挑鱼，一边聊着昨夜的那场大雨。",
    "卖豆腐的小伙子吆喝声最响，他说豆腐是凌晨三点起来磨的。",
    "太阳升高以后，人渐渐散了，只剩下满地的菜叶和湿漉漉的石板路。",
    "我提着一袋青菜往家走，觉得这座城市的一天，是从这里开始的。",
])
EN_TEXT = "\n\n".join([
    "The lighthouse keeper climbed the stairs every evening at six, counting the steps out of habit.",
    "From the top he could see the fishing boats coming home, small and dark against the water.",
    "He lit the lamp, wiped the glass, and wrote the weather in his log in a careful hand.",
    "On stormy nights he did not sleep at all, and watched the beam sweep the rocks until dawn.",
])


def write_inputs(path: Path, texts: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"text": t, "source": s, "license": "CC0"}, ensure_ascii=False) + "\n"
                            for t, s in texts), encoding="utf-8")
    return path


@contextlib.asynccontextmanager
async def fake_client(server: object, workspace: Path, reasks: int = 0) -> AsyncIterator[OpenAIClient]:
    endpoint = EndpointConfig(model="fake", base_urls=(server.base_url,), max_retries=0,  # type: ignore[attr-defined]
                              reasks=reasks, timeout_s=10)
    async with open_client(endpoint, workspace=workspace) as client:
        yield client
