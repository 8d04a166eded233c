"""Model calls of the construction steps: structured asks with our own checks, run through the runner loop.

The client layer already validates replies against the JSON schema and re-asks; `ask` adds the checks a
schema cannot express (a theme of at most five words, a non-empty summary) and re-asks with the reason,
up to `reasks` times. A call that still fails is returned as an error string for the stage file, never
replaced by a guessed value.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from howtobench.construct.workfile import StageRow, StageWriter
from howtobench.llm.reask import ask_until_accepted
from howtobench.llm.types import ChatRequest, ChatResult, LLMClient
from howtobench.runloop import LoopSettings, run_loop
from howtobench.steps.client import DEFAULT_IN_FLIGHT

T = TypeVar("T")
Unit = StageRow | Sequence[StageRow]  # what one job of a step makes: a row, or the items of one text

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


class _StageSink:
    """The runner loop's sink for a build step: a finished unit's rows (one, or a text's items) appended to the
    stage file at once; the unit failed when any of its rows did."""

    def __init__(self, writer: StageWriter) -> None:
        self.writer = writer
        self.done = self.failed = 0

    def record(self, result: Unit) -> bool:
        rows = result if isinstance(result, Sequence) else [result]
        for row in rows:
            self.writer.write(row)
        failed = any(not row.ok for row in rows)
        self.done += 1
        self.failed += failed
        return failed

    def stats(self) -> str:
        # "failed" only once one has: a clean step's output says nothing of failures (as before the loop drew it)
        return f"done {self.done}" + (f" · failed {self.failed}" if self.failed else "") if self.done else ""


def quiet_loop(step: str) -> LoopSettings:
    """A step's loop without a bar or a failed-share limit (a library call): the CLI passes its own."""
    return LoopSettings(f"build · {step}", DEFAULT_IN_FLIGHT, progress=False, noun="texts")


async def run_stage(path: Path, jobs: Sequence[T], work: Callable[[T], Awaitable[Unit]], loop: LoopSettings) -> None:
    """Run `work` on every job through the step layer's runner loop (`loop`: its bar, writings in flight and
    failed-share limit), each finished unit's rows appended to the stage file `path` as it finishes."""
    with StageWriter(path) as writer:
        await run_loop(jobs, work, _StageSink(writer), loop)


def json_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed JSON object schema with every property required, in the given order."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}

