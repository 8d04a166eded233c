"""Deterministic judge replies for tests that run real judges over a fake endpoint (live, batch or inspect).

`judge_reply(request)` answers an OpenAI-shaped request dict: the weight negotiation gets fixed, unequal weights
for the nodes its schema asks for; a leaf call gets a score chosen from the leaf's scale by a hash of the whole
prompt (scores differ per writing and per leaf, the same prompt always gets the same score). The leaf is
recognised by its criteria text, which only its own prompt carries.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Any

from fake_server import Reply
from howtobench.judges.tree import Tree, default_tree

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def schema_of(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    spec = (request.get("response_format") or {}).get("json_schema") or {}
    return str(spec.get("name", "")), dict(spec.get("schema") or {})


def weights_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Unequal weights summing to 1 per node the schema requires: 0.4/0.3/0.2/0.1 or 0.5/0.3/0.2; then the
    negotiator's explanation."""
    table = {4: [0.4, 0.3, 0.2, 0.1], 3: [0.5, 0.3, 0.2], 2: [0.6, 0.4], 1: [1.0]}
    out: dict[str, Any] = {}
    for node in schema["required"]:
        if schema["properties"][node].get("type") != "object":
            continue
        leaves = schema["properties"][node]["required"]
        out[node] = dict(zip(leaves, table[len(leaves)], strict=True))
    return {**out, "explanation": "fixed"} if "explanation" in schema["required"] else out


@functools.cache
def _tree() -> Tree:
    """The bundled tree, read once: parsing its YAML on every reply (~0.1 s) made the fake judge the bottleneck."""
    return default_tree()


def leaf_score(prompt: str) -> tuple[str, int]:
    tree = _tree()
    for node in tree.nodes:
        for leaf in node.leaves:
            if leaf.is_llm and (leaf.criteria.zh.strip() in prompt or leaf.criteria.en.strip() in prompt):
                digest = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)
                return leaf.id, leaf.scale[digest % len(leaf.scale)]
    raise AssertionError(f"no leaf criteria in prompt {prompt[-200:]!r}")


def first_user(request: dict[str, Any]) -> str:
    """The prompt of a call (re-asks append turns after it)."""
    return str(next(m["content"] for m in request["messages"] if m["role"] == "user"))


def judge_reply(request: dict[str, Any]) -> dict[str, Any]:
    name, schema = schema_of(request)
    if name == "weights":
        return weights_for(schema)
    leaf, score = leaf_score(first_user(request))
    return {"analysis": f"{leaf} judged", "score": score}


def server_handler(reply: Handler = judge_reply) -> Callable[[dict[str, Any]], Reply]:
    """For a fake server: judge calls (they carry a reply schema) get `reply`, writer calls a writing."""

    def handle(request: dict[str, Any]) -> Reply:
        if not request.get("response_format"):
            return Reply.text(writing_of(first_user(request)))
        return Reply.json(reply(request))

    return handle


def writing_of(prompt: str) -> str:
    """A writing that differs per item: headings and a paragraph whose length depends on the prompt."""
    size = 20 + int(hashlib.sha256(prompt.encode()).hexdigest()[:4], 16) % 200
    return f"# 标题\n\n{'文' * size}。\n\n## 小节\n\n结尾。"
