"""Shared bits of the client tests: a fast retry policy and a score schema shaped like a judge leaf."""

from __future__ import annotations

from typing import Any

from howtobench.llm.retry import RetryPolicy
from howtobench.llm.types import ChatRequest

FAST_RETRY = RetryPolicy(base_s=0.005, max_s=0.02)
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"enum": list(range(1, 11))}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
}


def req(text: str = "评分", **kw: Any) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": text},), **kw)
