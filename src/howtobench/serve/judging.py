"""The judge a sample gets: the method of `judge` built from the registry, with or without the reference.

The server builds each judge once and shares it across every request, so what the judge layer shares between
judgments it shares here too: ToW's negotiator asks J_W once per instruction and makes concurrent judgments of
that instruction wait for that one answer (judges/negotiator.py), so a GRPO group of n rollouts costs one
weights call plus the leaf calls of its n writings. With a panel (`serve --panel`) each judge of the panel has its
own judge on its own client, and the reward is the panel's score (judges/panel.py).

A judgment whose calls ran out of retries on a fault that may pass (nothing answering, resets, 5xx, timeouts, 429)
is judged again, with backoff, until its request's deadline: the calls it already got back come from the cache,
so only what failed is asked again. It keeps its place at the gate meanwhile (a sample already admitted is not
sent behind those that came after it).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from howtobench.concurrency import PacedGate
from howtobench.data.models import Item, Writing
from howtobench.errors import RateLimited, ServerDied, TransientError, Unreachable
from howtobench.guard.guard import Guard
from howtobench.judges.base import Judge, Judgment, build_judge
from howtobench.judges.panel import PanelSpec, build_panel
from howtobench.judges.runner import judge_or_fail
from howtobench.llm.types import LLMClient

POLICY = "policy"  # the `model` of a judged rollout (judgments name the model that wrote the text)
RETRY_BASE_S, RETRY_MAX_S = 0.5, 5.0  # backoff between judgments of one sample that ran into a judge fault
log = logging.getLogger(__name__)


def is_transient(error: BaseException) -> bool:
    """A judge fault that may pass by itself (the embedded model's server dying does not)."""
    return isinstance(error, (Unreachable, TransientError, RateLimited)) and not isinstance(error, ServerDied)


class JudgeSet:
    """The judge with the reference (items that have one) and the reference-free judge (built on first use)."""

    def __init__(self, client: LLMClient, method: str = "tow", options: dict[str, Any] | None = None, *,
                 no_reference: bool = False, panel: PanelSpec | None = None,
                 members: Mapping[str, LLMClient] | None = None, in_flight: int | None = None,
                 guard: Guard | None = None) -> None:
        self.client, self.method, self.no_reference = client, method, no_reference
        self.guard = guard if guard is not None and guard.on else None  # checks each response first (guard/)
        # Why a bound: a trainer's batch arrives at once, and starting every sample together renders every prompt
        # before the first call goes out (bench/reward_server.py: the judge idle for the first half second); and why
        # paced (one sample let in per turn of the loop): the first samples' calls then go out, and their replies are
        # read, while the later ones are still being prepared
        self._gate = PacedGate(in_flight) if in_flight is not None else None
        self.panel, self.members = panel, dict(members or {})
        self.options = {k: v for k, v in (options or {}).items() if k != "with_reference"}
        self._judges: dict[bool, Judge] = {}
        self.for_reference(not no_reference)  # a method that cannot be built fails at start, not on a request

    def for_reference(self, with_reference: bool) -> Judge:
        judge = self._judges.get(with_reference)
        if judge is None:
            options = self.options if with_reference else {**self.options, "with_reference": False}
            judge = self._judges[with_reference] = self._build(options)
        return judge

    def _build(self, options: dict[str, Any]) -> Judge:
        """The method's judge, or with a panel a `PanelJudge` of one such judge per member's client."""
        if self.panel is None:
            return build_judge(self.method, self.client, options)
        return build_panel(self.panel, self.method, self.members, options)

    def for_item(self, item: Item) -> Judge:
        return self.for_reference(not self.no_reference and bool(item.reference.strip()))

    async def judge(self, item: Item, response: str, *, until: float | None = None,
                    on_retry: Callable[[], None] | None = None) -> Judgment:
        """The judgment of one response; a writing-level failure is a failed judgment, a run-level one raises (a
        passing one after it was retried until `until`: module docstring). The guard looks first, once the sample
        is let in at the gate (guard/): checked on arrival (~0.3 ms a writing), a trainer's whole batch was checked
        before its first judge call went out — the judge idle for the first tenth of a second of every step
        (bench/reward_server.py); a writing it skips leaves the gate at once."""
        writing = Writing(infer_id=item.id, model=POLICY, output=response)
        if self._gate is None:
            return await self._guarded(item, writing, until, on_retry)
        async with self._gate:
            return await self._guarded(item, writing, until, on_retry)

    async def _guarded(self, item: Item, writing: Writing, until: float | None,
                       on_retry: Callable[[], None] | None) -> Judgment:
        verdict = self.guard.check(item, writing.output) if self.guard is not None else None
        if verdict is not None and verdict.skip is not None:  # no judge call
            return self.guard.skipped(self.method, item, writing, verdict)  # type: ignore[union-attr]
        judged = await self._judge_patiently(item, writing, until, on_retry)
        return judged if verdict is None else self.guard.annotate(judged, verdict)  # type: ignore[union-attr]

    async def _judge_patiently(self, item: Item, writing: Writing, until: float | None,
                               on_retry: Callable[[], None] | None) -> Judgment:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await judge_or_fail(self.for_item(item), item, writing)
            except Exception as exc:
                wait = random.uniform(0.5, 1.0) * min(RETRY_MAX_S, RETRY_BASE_S * 2 ** (attempt - 1))
                if until is None or not is_transient(exc) or time.monotonic() + wait >= until:
                    raise
                log.info("the judge failed a sample (%s); judged again in %.1f s", exc, wait)
                if on_retry is not None:
                    on_retry()
                await asyncio.sleep(wait)
