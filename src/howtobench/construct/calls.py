"""Model calls of the construction steps: structured asks with our own checks, run concurrently.

The client layer already validates replies against the JSON schema and re-asks; `ask` adds the checks a
schema cannot express (a theme of at most five words, a non-empty summary) and re-asks with the reason,
up to `reasks` times. A call that still fails is returned as an error string for the stage file, never
replaced by a guessed value.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from howtobench.concurrency import gather_or_cancel
from howtobench.llm.types import ChatRequest, LLMClient

T = TypeVar("T")
R = TypeVar("R")

Check = Callable[[dict[str, Any]], str | None]


async def ask(client: LLMClient, request: ChatRequest, check: Check | None = None, *, reasks: int = 1
              ) -> tuple[dict[str, Any] | None, str | None]:
    """(data, None) for a valid reply, else (None, reason). `check` returns a problem or None."""
    messages = list(request.messages)
    problem = "no reply"
    for _ in range(reasks + 1):
        result = await client.chat(request.model_copy(update={"messages": tuple(messages)}))
        if not result.ok or result.data is None:
            return None, result.error or "the reply was not a JSON object"
        problem_or_none = check(result.data) if check else None
        if problem_or_none is None:
            return result.data, None
        problem = problem_or_none
        messages += [
            {"role": "assistant", "content": result.text or ""},
            {"role": "user", "content": f"The answer is not acceptable: {problem}. Answer again, fixing that."},
        ]
    return None, f"rejected after {reasks + 1} asks: {problem}"


async def run_all(jobs: Sequence[T], work: Callable[[T], Awaitable[R]],
                  on_done: Callable[[R], None] | None = None) -> list[R]:
    """Run `work` on every job concurrently (the client bounds concurrency); `on_done` sees each result."""

    async def one(job: T) -> R:
        result = await work(job)
        if on_done is not None:
            on_done(result)
        return result

    return await gather_or_cancel(*(one(job) for job in jobs))


def json_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed JSON object schema with every property required, in the given order."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}

