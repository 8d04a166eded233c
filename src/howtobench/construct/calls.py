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
from howtobench.llm.reask import ask_until_accepted
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient

T = TypeVar("T")
R = TypeVar("R")

Check = Callable[[dict[str, Any]], str | None]


async def ask(client: LLMClient, request: ChatRequest, check: Check | None = None, *, reasks: int = 1
              ) -> tuple[dict[str, Any] | None, str | None]:
    """(data, None) for a valid reply, else (None, reason). `check` returns a problem or None."""

    async def send(extra: list[dict[str, str]]) -> ChatResult:
        return await client.chat(request.model_copy(update={"messages": (*request.messages, *extra)}))

    async def refusal_of(result: ChatResult) -> tuple[str, str] | None:
        if not result.ok or result.data is None or check is None:
            return None
        problem = check(result.data)
        return None if problem is None else (result.text or "", problem)

    asked = await ask_until_accepted(send, refusal_of, reasks, follow_up=_not_acceptable)
    result = asked.reply
    if not result.ok or result.data is None:
        return None, result.error or "the reply was not a JSON object"
    if asked.refusal is not None:
        return None, f"rejected after {asked.asks} asks: {asked.refusal[1]}"
    return result.data, None


def _not_acceptable(text: str, problem: str) -> list[dict[str, str]]:
    """The follow-up of a reply that fits the schema but not a check the schema cannot express."""
    return [{"role": "assistant", "content": text},
            {"role": "user", "content": f"The answer is not acceptable: {problem}. Answer again, fixing that."}]


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

