"""Rewards for many samples at once over one judge: admission, deadlines, failures and their substitutes.

Every sample of every request is judged in its own task the moment it is admitted, so all of them are in the
judge layer at once and the client's slots (the judge's concurrency) are the only bound on the calls in flight.
A request waits for its samples up to its deadline; a sample still running then gets null ("deadline"), but its
judgment goes on and lands in the call cache, so the trainer's retry is answered from there. `max_pending`
bounds those tasks (admitted, not yet judged): a request that would pass it is refused (`Overloaded`, HTTP 429);
a request of more samples than `max_pending` itself can never be admitted and is refused once (`TooLarge`, 413).

Failures are never rewards: a sample whose judgment failed (or that could not be read) has reward None and its
reason. `failed_reward` lets a trainer that cannot take None choose a substitute: "group-mean" (the mean of the
judged rewards of its group, `groups.py`) or a number; the outcome then says it was substituted and why. A
run-level error (judge 401, nothing answering, disk) is raised for the whole request: no numbers at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from howtobench.concurrency import cancel_and_wait
from howtobench.guard.guard import is_skipped, skipped_reward
from howtobench.judges.base import Judgment
from howtobench.serve.groups import Cohort, Cohorts
from howtobench.serve.judging import JudgeSet
from howtobench.serve.metrics import ServeMetrics
from howtobench.serve.samples import Sample

GROUP_MEAN = "group-mean"
FailedReward = float | str | None  # None, GROUP_MEAN or a number
DEFAULT_DEADLINE_S = 170.0  # under OpenRLHF's 180 s client timeout, so the trainer reads our answer, not a timeout
DEFAULT_MAX_PENDING = 4096


class Overloaded(Exception):
    """Admitting the request would pass `max_pending`: answer 429 with `retry_after_s`."""

    def __init__(self, pending: int, asked: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"{pending} samples are being judged and this request adds {asked}: over --max-pending "
                         f"{limit}; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class TooLarge(Exception):
    """A request of more samples than `max_pending` admits even on an idle server: no retry can help (HTTP 413)."""

    def __init__(self, asked: int, limit: int) -> None:
        super().__init__(f"this request has {asked:,} samples, more than this server ever admits at once "
                         f"(--max-pending {limit:,}): send at most {limit:,} per request, or start the server with a "
                         "larger --max-pending")


@dataclass(frozen=True)
class Rejected:
    """A sample that cannot be judged (bad label, a query that does not continue its prompt); `group` when its
    instruction is known (it may still get its group's mean)."""

    error: str
    group: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One sample's answer: `reward` None means no reward (see `error`); `substituted` says a substitute was given
    (then `reward` is not the judgment's)."""

    reward: float | None
    judgment: Judgment | None = None
    error: str | None = None
    substituted: str | None = None
    response_chars: int | None = None


def judged_reward(judgment: Judgment) -> float | None:
    """The judgment's root as the reward; None for a failed judgment. An empty response keeps the judge's own
    score for it (every leaf at its lowest): that is what the judge says of an empty text, not a made-up one. A
    writing the guard skipped gets the reward it declares (`--guard-reward`: the floor, null or a number)."""
    if is_skipped(judgment):
        return skipped_reward(judgment)
    return None if judgment.status == "failed" else judgment.score


def outcome_kind(entry: Sample | Rejected, outcome: Outcome) -> str:
    """How a sample was answered, for /metrics: judged, failed, deadline, rejected or skipped (by the guard)."""
    if isinstance(entry, Rejected):
        return "rejected"
    if outcome.judgment is None:
        return "deadline"
    if is_skipped(outcome.judgment):
        return "skipped"
    return "failed" if outcome.reward is None else "judged"


def failure_of(judgment: Judgment) -> str:
    return "; ".join(judgment.failures) or "the judgment failed"


class RewardService:
    """Judges samples for every request of a server (or an in-process adapter) over one `JudgeSet`."""

    def __init__(self, judges: JudgeSet, *, failed_reward: FailedReward = None,
                 max_pending: int = DEFAULT_MAX_PENDING, deadline_s: float = DEFAULT_DEADLINE_S,
                 metrics: ServeMetrics | None = None) -> None:
        if isinstance(failed_reward, str) and failed_reward != GROUP_MEAN:
            raise ValueError(f"failed_reward is {GROUP_MEAN!r}, a number or None, not {failed_reward!r}")
        self.judges, self.failed_reward = judges, failed_reward
        self.max_pending, self.deadline_s = max_pending, deadline_s
        self.metrics = metrics or ServeMetrics()
        self.cohorts = Cohorts()
        self._running: set[asyncio.Task[Judgment]] = set()

    @property
    def pending(self) -> int:
        """Samples admitted and not yet judged (those past their request's deadline included)."""
        return len(self._running)

    async def score(self, entries: Sequence[Sample | Rejected], deadline_s: float | None = None) -> list[Outcome]:
        """One outcome per entry, in order. Raises `TooLarge` (more samples than ever admitted), `Overloaded`, or the
        first run-level error of the request."""
        asked = sum(isinstance(e, Sample) for e in entries)
        if asked > self.max_pending:  # refused once: a 429 would be retried forever on an idle server
            self.metrics.refused.inc()
            raise TooLarge(asked, self.max_pending)
        if asked and self.pending + asked > self.max_pending:
            self.metrics.refused.inc()
            raise Overloaded(self.pending, asked, self.max_pending, self._retry_after())
        seconds = self.deadline_s if deadline_s is None else deadline_s
        until = time.monotonic() + seconds
        cohorts = [None if e.group is None else self.cohorts.join(e.group) for e in entries]  # all, before any
        started = [self._admit(e, c) for e, c in zip(entries, cohorts, strict=True)]  # leaves: one cohort per group
        tasks = [task for task, _ in started if task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=max(0.0, until - time.monotonic()))
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]  # run-level: the whole request fails
        outcomes = [self._outcome(e, task, seconds) for e, (task, _) in zip(entries, started, strict=True)]
        for entry, outcome in zip(entries, outcomes, strict=True):
            self.metrics.samples.labels(outcome=outcome_kind(entry, outcome)).inc()
        return await self._substitute(outcomes, [cohort for _, cohort in started], until)

    def _admit(self, entry: Sample | Rejected, cohort: Cohort | None
               ) -> tuple[asyncio.Task[Judgment] | None, Cohort | None]:
        """Start judging a sample in its own task (a rejected one leaves its cohort at once)."""
        if isinstance(entry, Rejected):
            if cohort is not None and entry.group is not None:
                self.cohorts.leave(entry.group, cohort, None)
            return None, cohort
        task = asyncio.ensure_future(self.judges.judge(entry.item, entry.response))
        self._running.add(task)
        self.metrics.in_flight.inc()
        started = time.monotonic()
        task.add_done_callback(lambda t: self._finished(t, entry, cohort, started))
        return task, cohort

    def _finished(self, task: asyncio.Task[Judgment], sample: Sample, cohort: Cohort | None, started: float) -> None:
        self._running.discard(task)
        self.metrics.in_flight.dec()
        judgment = None if task.cancelled() or task.exception() is not None else task.result()
        if cohort is not None:
            self.cohorts.leave(sample.group, cohort, None if judgment is None else judged_reward(judgment))
        self.metrics.judged(judgment, sample.response, time.monotonic() - started,
                            None if task.cancelled() else task.exception())

    def _outcome(self, entry: Sample | Rejected, task: asyncio.Task[Judgment] | None, seconds: float) -> Outcome:
        if isinstance(entry, Rejected):
            return Outcome(None, error=entry.error)
        assert task is not None
        chars = len(entry.response)
        if not task.done():
            return Outcome(None, response_chars=chars, error=f"deadline: not judged within {seconds:g} s (the "
                           "judgment goes on and is cached: the same request sent again is answered from the cache)")
        judgment = task.result()
        reward = judged_reward(judgment)
        return Outcome(reward, judgment, error=None if reward is not None else failure_of(judgment),
                       response_chars=chars)

    async def _substitute(self, outcomes: list[Outcome], cohorts: list[Cohort | None], until: float
                          ) -> list[Outcome]:
        """Apply `failed_reward` to the samples without a reward."""
        if self.failed_reward is None or all(o.reward is not None for o in outcomes):
            return outcomes
        out = []
        for outcome, cohort in zip(outcomes, cohorts, strict=True):
            if outcome.reward is None:
                outcome = await self._substitute_one(outcome, cohort, until)
            out.append(outcome)
        return out

    async def _substitute_one(self, outcome: Outcome, cohort: Cohort | None, until: float) -> Outcome:
        why = outcome.error or "no reward"
        if not isinstance(self.failed_reward, str):
            value = float(self.failed_reward)  # type: ignore[arg-type]
            self.metrics.substituted.inc()
            return replace(outcome, reward=value, error=why,
                           substituted=f"--failed-reward {value:g} given in place of a failure")
        if cohort is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(cohort.closed.wait()), max(0.0, until - time.monotonic()))
        mean = cohort.mean() if cohort is not None else None
        if mean is None:
            return replace(outcome, error=f"{why}; group-mean: no sample of its group was judged")
        self.metrics.substituted.inc()
        count = len(cohort.rewards) if cohort is not None else 0
        return replace(outcome, reward=mean, error=why,
                       substituted=f"group-mean: the mean of the {count} judged sample(s) of its instruction")

    def _retry_after(self) -> int:
        """Seconds a refused trainer should wait: about the time the samples ahead of it take (at least 1)."""
        return max(1, round(self.metrics.mean_sample_seconds()))

    async def close(self) -> None:
        """Stop every judgment still running (the server is shutting down)."""
        await cancel_and_wait(list(self._running))
