"""Which samples share a group for `--failed-reward group-mean`, and what a failed one gets.

A GRPO group is n rollouts of one prompt, and trainers send them at once: OpenRLHF one request per rollout, verl's
reward loop one coroutine per rollout, TRL and slime's group function all in one call. So a group is every sample
of one instruction (`Sample.group`) in flight at the same time: a sample joins the open cohort of its instruction
when it is admitted, and the cohort closes when its last member has been judged. With `--group-size n` the cohort
also waits for its n members to arrive (rollouts finish generating at different times), but at most
`straggler_s` once nobody of it is being judged: a rollout that never comes does not hold the others.

What a failed member gets (`substitute`), known once its cohort closed (or its request's deadline came):

- the mean of the judged rewards of its cohort: its advantage under any group baseline (GRPO, RLOO, REINFORCE++
  with baseline, Dr. GRPO) is then exactly zero, and the group's mean is unchanged;
- with no judged member, `ALL_FAILED_REWARD` for every member: a constant group has zero advantage under those
  estimators, and OpenRLHF's dynamic filtering (which keeps groups whose mean score lies strictly inside its
  range, 0-1 by default) drops it.

Every substitute says so (`Outcome.substituted`, /metrics by rule): nothing is given silently.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

ALL_FAILED_REWARD = 0.0
DEFAULT_STRAGGLER_S = 5.0


@dataclass(eq=False)
class Cohort:
    """The samples of one instruction in flight together, and the rewards of those judged so far."""

    live: int = 0
    joined: int = 0
    rewards: list[float] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    idle_since: float = 0.0  # when `live` last fell to 0 (a cohort waiting for its stragglers)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def mean(self) -> float | None:
        return sum(self.rewards) / len(self.rewards) if self.rewards else None

    def changed(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def change_event(self) -> asyncio.Event:
        """The event the next change sets, taken now: awaited in a task, it must not be read when the task first
        runs, or a change in between is missed (and the waiter sleeps to its deadline)."""
        return self._changed


class Cohorts:
    """The open cohort of each instruction (an instruction with nothing in flight has none: memory stays bounded
    by the instructions of a step)."""

    def __init__(self, group_size: int | None = None, straggler_s: float = DEFAULT_STRAGGLER_S) -> None:
        self.group_size, self.straggler_s = group_size, straggler_s
        self._open: dict[str, Cohort] = {}

    def join(self, group: str) -> Cohort:
        cohort = self._open.get(group)
        if cohort is None or self._stale(cohort):
            if cohort is not None:
                self._close(group, cohort)
            cohort = self._open[group] = Cohort()
        cohort.live += 1
        cohort.joined += 1
        if self.group_size is not None and cohort.joined >= self.group_size:
            del self._open[group]  # full: the next sample of this instruction starts the next group
        cohort.changed()
        return cohort

    def _stale(self, cohort: Cohort) -> bool:
        """Idle past the straggler wait: whatever comes now belongs to another group."""
        return cohort.live == 0 and time.monotonic() - cohort.idle_since > self.straggler_s

    def leave(self, group: str, cohort: Cohort, reward: float | None) -> None:
        """A member is done (`reward` None: it failed); the last one out closes the cohort (when complete)."""
        if reward is not None:
            cohort.rewards.append(reward)
        cohort.live -= 1
        if cohort.live == 0:
            cohort.idle_since = time.monotonic()
            if self.group_size is None or cohort.joined >= self.group_size:
                self._close(group, cohort)
        cohort.changed()

    def _close(self, group: str, cohort: Cohort) -> None:
        cohort.closed.set()
        if self._open.get(group) is cohort:
            del self._open[group]

    async def settled(self, group: str, cohort: Cohort, until: float) -> None:
        """Until the cohort closed, `until` (a deadline) passed, or, with nobody of it being judged, the
        straggler wait passed (then it closes: the group is what has come)."""
        while not cohort.closed.is_set():
            left = until - time.monotonic()
            if left <= 0:
                return
            waiting_for_stragglers = cohort.live == 0
            wait = min(left, self.straggler_s - (time.monotonic() - cohort.idle_since)) \
                if waiting_for_stragglers else left
            if wait <= 0:
                self._close(group, cohort)
                return
            change = asyncio.ensure_future(cohort.change_event().wait())
            try:
                await asyncio.wait({change}, timeout=wait)
            finally:
                change.cancel()

    def __len__(self) -> int:
        return len(self._open)


@dataclass(frozen=True)
class Substitute:
    """What a failed sample gets under group-mean, and the line that says why."""

    reward: float
    rule: str  # "group-mean" or "all-failed"
    said: str


def substitute(cohort: Cohort | None) -> Substitute:
    """The group mean of a failed sample's cohort, or the all-failed constant (module docstring)."""
    mean = cohort.mean() if cohort is not None else None
    if mean is None or cohort is None:
        return Substitute(ALL_FAILED_REWARD, "all-failed", f"group-mean: no sample of its group was judged, so "
                          f"every sample of it gets {ALL_FAILED_REWARD:g} (a constant group: zero advantage)")
    return Substitute(mean, "group-mean",
                      f"group-mean: the mean of the {len(cohort.rewards)} judged sample(s) of its instruction")
