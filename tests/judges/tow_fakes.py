"""Scripted judge replies for the ToW tests: weights and leaf scores chosen per request, over the fake server."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.judges.tree import Tree, default_tree
from howtobench.llm.client import open_client

GUIDE_WEIGHTS = {
    "content": {"opening_ending": 0.4, "language": 0.3, "logic": 0.2, "emotion": 0.1},
    "format": {"plots": 0.5, "paragraphing": 0.3, "formatting": 0.2},
}
LEAF_SCORES = {"opening_ending": 8, "language": 6, "logic": 7, "emotion": 5, "plots": 9, "paragraphing": 2,
               "impression": 7}  # plots answers 1-10 and is stepped: 9 -> 10


def schema_name(request: dict[str, Any]) -> str:
    return str(((request.get("response_format") or {}).get("json_schema") or {}).get("name", ""))


CRITERION = re.compile(r"(?:【评审项目：(.+?)】|\[Criterion: (.+?)\])")


def leaf_of(request: dict[str, Any], tree: Tree) -> str:
    """Which leaf a request scores: the label in the criterion header after the writing (zh or en)."""
    tail = request["messages"][-1]["content"].rsplit("<<<END WRITING>>>", 1)[-1]
    found = CRITERION.search(tail)
    label = (found.group(1) or found.group(2)) if found else None
    for node in tree.nodes:
        for leaf in node.leaves:
            if label in (leaf.label.zh, leaf.label.en):
                return leaf.id
    raise AssertionError(f"no leaf label in {tail[:80]!r}")


def tow_handler(
    weights: Callable[[dict[str, Any]], Any] | dict[str, Any] | None = None,
    scores: dict[str, Any] | None = None,
    tree: Tree | None = None,
) -> Callable[[dict[str, Any]], Reply]:
    """Weights from `weights` (a dict, or a function of the request), leaf scores from `scores` by leaf id.

    A score that is a Reply is sent as is (to inject faults); a missing leaf gets score 5.
    """
    spec = tree or default_tree()
    table = {**LEAF_SCORES, **(scores or {})}

    def handle(request: dict[str, Any]) -> Reply:
        if schema_name(request) == "weights":
            chosen = weights(request) if callable(weights) else (weights or GUIDE_WEIGHTS)
            wanted = json.loads(json.dumps(request["response_format"]["json_schema"]["schema"]))["required"]
            body = {k: v for k, v in chosen.items() if k in wanted} if isinstance(chosen, dict) else chosen
            if isinstance(body, dict) and "explanation" in wanted:
                body = {**body, "explanation": "why"}
            return body if isinstance(body, Reply) else Reply.json(body)
        value = table.get(leaf_of(request, spec), 5)
        return value if isinstance(value, Reply) else Reply.json({"analysis": "ok", "score": value})

    return handle


@asynccontextmanager
async def fake_client(server: FakeServer, workspace: Path, **endpoint: Any) -> AsyncIterator[Any]:
    config = EndpointConfig(model="fake-judge", base_urls=(server.base_url,), max_retries=0, **endpoint)
    async with open_client(config, workspace=workspace) as client:
        yield client
