"""An `LLMClient` without a network, for tests of what callers do with a call's outcome.

`FakeClient(behave)` calls `behave(request)` for every chat: it returns a `ChatResult` (the reply), an
exception (raised after `delay` seconds, as a client that gave up would), or `HANG` (the call never
ends; cancelling it is counted in `client.cancelled`). Run-level errors (errors.py) are raised from
here so the runners' plumbing is tested apart from the HTTP layer that raises them in real runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from howtobench.llm.types import ChatRequest, ChatResult, Usage

HANG = object()
Behaviour = Callable[[ChatRequest], object]


def reply(text: str = "ok", data: dict[str, object] | None = None) -> ChatResult:
    return ChatResult(ok=True, text=text, data=data, usage=Usage(calls=1, completion_tokens=3))


class FakeClient:
    def __init__(self, behave: Behaviour, *, delay: float = 0.02, model: str = "fake-model") -> None:
        self.behave, self.delay, self._model = behave, delay, model
        self.calls: list[ChatRequest] = []
        self.cancelled = 0

    @property
    def model(self) -> str:
        return self._model

    async def chat(self, request: ChatRequest) -> ChatResult:
        self.calls.append(request)
        outcome = self.behave(request)
        if outcome is HANG:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        await asyncio.sleep(self.delay)
        if isinstance(outcome, BaseException):
            raise outcome
        assert isinstance(outcome, ChatResult)
        return outcome
