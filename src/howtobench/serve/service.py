"""Rewards for many samples at once over one judge: admission, deadlines, failures and their substitutes.

Every sample of every request is judged in its own task the moment it is admitted; the judge set lets them in
first come first served as the judge can take them (`judging.py`), so the client's slots (the judge's concurrency)
are the only bound on the calls in flight. A request waits for its samples up to its deadline; a sample still
running then gets null ("deadline"), but its judgment goes on and lands in the call cache, so the trainer's retry
is answered from there.

Backpressure is waiting, not refusing: admitted samples wait their turn in that queue. `max_queued` bounds what
the server holds (each queued sample holds its response text and a task: docs/rl.md gives the memory figure); a
request that would pass it while others are queued is refused (`Overloaded`, HTTP 429) with the flag to raise,
and a request larger than the bound on its own is admitted whole and judged in parts as the judge takes them:
never refused forever.

A judge that blinks (refused connections, resets, 5xx, timeouts) is waited for inside the request: the client
retries with backoff, its pool waits for the judge's circuit to be probed again (`llm/limits.py`), and a judgment
that still ran out of retries is tried again until the request's deadline (`judging.py`). Only what will not fix
itself (401/403/404, a setting, the disk) is raised for the whole request: no numbers at all (HTTP 503).

Failures are never rewards: a sample whose judgment failed (or that could not be read) has no reward of its own.
`failed_reward` says what a trainer that cannot take None gets instead: "group-mean" (the default: the mean of the
judged rewards of its group, or one constant for a group with none, `groups.py`), a number, or None (null, for
trainers that take it); the outcome says it was substituted and why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from howtobench.concurrency import cancel_and_wait
from howtobench.guard.guard import is_skipped, skipped_reward
from howtobench.judges.base import Judgment
from howtobench.serve.groups import DEFAULT_STRAGGLER_S, Cohort, Cohorts, substitute
from howtobench.serve.judging import JudgeSet, is_transient
from howtobench.serve.metrics import ServeMetrics
from howtobench.serve.samples import Sample

GROUP_MEAN = "group-mean"
FailedReward = float | str | None  # None, GROUP_MEAN or a number
DEFAULT_DEADLINE_S = 170.0  # under OpenRLHF's 180 s client timeout, so the trainer reads our answer, not a timeout
DEFAULT_MAX_QUEUED = 16_384
DEFAULT_FAILED_REWARD: FailedReward = GROUP_MEAN


class Overloaded(Exception):
    """Admitting the request would pass `max_queued` while others wait: answer 429 with `retry_after_s`."""

    def __init__(self, pending: int, asked: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"{pending} samples are queued or being judged and this request adds {asked}: over "
                         f"--max-queued {limit}; raise --max-queued (memory: docs/rl.md) or retry in "
                         f"{retry_after_s} s")
        self.retry_after_s = retry_after_s


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

    def __init__(self, judges: JudgeSet, *, failed_reward: FailedReward = DEFAULT_FAILED_REWARD,
                 max_queued: int = DEFAULT_MAX_QUEUED, deadline_s: float = DEFAULT_DEADLINE_S,
                 group_size: int | None = None, straggler_s: float = DEFAULT_STRAGGLER_S,
                 metrics: ServeMetrics | None = None) -> None:
        if isinstance(failed_reward, str) and failed_reward != GROUP_MEAN:
            raise ValueError(f"failed_reward is {GROUP_MEAN!r}, a number or None, not {failed_reward!r}")
        self.judges, self.failed_reward = judges, failed_reward
        self.max_queued, self.deadline_s = max_queued, deadline_s
        self.metrics = metrics or ServeMetrics()
        self.cohorts = Cohorts(group_size, straggler_s)
        self._running: set[asyncio.Task[Judgment]] = set()

    @property
    def pending(self) -> int:
        """Samples admitted and not yet judged (queued, being judged, or past their request's deadline)."""
        return len(self._running)

    async def score(self, entries: Sequence[Sample | Rejected], deadline_s: float | None = None) -> list[Outcome]:
        """One outcome per entry, in order. Raises `Overloaded`, or the request's first error that retries cannot
        fix (a judge that blinks is waited for up to the deadline: module docstring)."""
        asked = sum(isinstance(e, Sample) for e in entries)
        if asked and self.pending and self.pending + asked > self.max_queued:
            self.metrics.refused.inc()
            raise Overloaded(self.pending, asked, self.max_queued, self._retry_after())
        seconds = self.deadline_s if deadline_s is None else deadline_s
        until = time.monotonic() + seconds
        cohorts = [None if e.group is None else self.cohorts.join(e.group) for e in entries]  # all, before any
        started = [self._admit(e, c, until) for e, c in zip(entries, cohorts, strict=True)]
        tasks = [task for task, _ in started if task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=max(0.0, until - time.monotonic()))
        for task in tasks:
            error = task.exception() if task.done() and not task.cancelled() else None
            if error is not None and not is_transient(error):
                raise error  # the judge is unusable: the whole request fails
        outcomes = [self._outcome(e, task, seconds) for e, (task, _) in zip(entries, started, strict=True)]
        for entry, outcome in zip(entries, outcomes, strict=True):
            self.metrics.samples.labels(outcome=outcome_kind(entry, outcome)).inc()
        return await self._substitute(outcomes, entries, [cohort for _, cohort in started], until)

    def _admit(self, entry: Sample | Rejected, cohort: Cohort | None, until: float
               ) -> tuple[asyncio.Task[Judgment] | None, Cohort | None]:
        """Start judging a sample in its own task (a rejected one leaves its cohort at once)."""
        if isinstance(entry, Rejected):
            if cohort is not None and entry.group is not None:
                self.cohorts.leave(entry.group, cohort, None)
            return None, cohort
        task = asyncio.ensure_future(self.judges.judge(entry.item, entry.response, until=until,
                                                       on_retry=self.metrics.judge_retries.inc))
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
        error = None if task.cancelled() else task.exception()
        if error is not None:  # a judge fault that outlasted the retries up to the deadline
            return Outcome(None, response_chars=chars, error=f"the judge did not recover within {seconds:g} s: "
                           f"{type(error).__name__}: {error}")
        judgment = task.result()
        reward = judged_reward(judgment)
        return Outcome(reward, judgment, error=None if reward is not None else failure_of(judgment),
                       response_chars=chars)

    async def _substitute(self, outcomes: list[Outcome], entries: Sequence[Sample | Rejected],
                          cohorts: list[Cohort | None], until: float) -> list[Outcome]:
        """Apply `failed_reward` to the samples without a reward."""
        if self.failed_reward is None or all(o.reward is not None for o in outcomes):
            return outcomes
        out = []
        for outcome, entry, cohort in zip(outcomes, entries, cohorts, strict=True):
            if outcome.reward is None:
                outcome = await self._substitute_one(outcome, entry.group, cohort, until)
            out.append(outcome)
        return out

    async def _substitute_one(self, outcome: Outcome, group: str | None, cohort: Cohort | None, until: float
                              ) -> Outcome:
        why = outcome.error or "no reward"
        if not isinstance(self.failed_reward, str):
            value = float(self.failed_reward)  # type: ignore[arg-type]
            self.metrics.substituted.labels(rule="value").inc()
            return replace(outcome, reward=value, error=why,
                           substituted=f"--failed-reward {value:g} given in place of a failure")
        if cohort is not None and group is not None:
            await self.cohorts.settled(group, cohort, until)
        given = substitute(cohort)
        self.metrics.substituted.labels(rule=given.rule).inc()
        return replace(outcome, reward=given.reward, error=why, substituted=given.said)

    def _retry_after(self) -> int:
        """Seconds a refused trainer should wait: about the time the samples ahead of it take (at least 1)."""
        return max(1, round(self.metrics.mean_sample_seconds()))

    async def close(self) -> None:
        """Stop every judgment still running (the server is shutting down)."""
        await cancel_and_wait(list(self._running))
