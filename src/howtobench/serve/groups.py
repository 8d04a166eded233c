"""Which samples share a group for `--failed-reward group-mean`: the ones of one instruction judged together.

A GRPO group is n rollouts of one prompt, and trainers send them at once: OpenRLHF one request per rollout,
verl's batch manager all in one call. So a group is every sample of one instruction (`Sample.group`) in flight
at the same time: a sample joins the open cohort of its instruction when it is admitted, the cohort closes when
its last member has been judged, and a failed member's substitute is the mean of the judged rewards of its
cohort, known only once the cohort has closed (every member of it judged, or given up by its deadline).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(eq=False)
class Cohort:
    """The samples of one instruction in flight together, and the rewards of those judged so far."""

    live: int = 0
    rewards: list[float] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    def mean(self) -> float | None:
        return sum(self.rewards) / len(self.rewards) if self.rewards else None


class Cohorts:
    """The open cohort of each instruction (an instruction with nothing in flight has none: memory stays bounded)."""

    def __init__(self) -> None:
        self._open: dict[str, Cohort] = {}

    def join(self, group: str) -> Cohort:
        cohort = self._open.get(group)
        if cohort is None:
            cohort = self._open[group] = Cohort()
        cohort.live += 1
        return cohort

    def leave(self, group: str, cohort: Cohort, reward: float | None) -> None:
        """A member is done (`reward` None: it failed); the last one out closes the cohort."""
        if reward is not None:
            cohort.rewards.append(reward)
        cohort.live -= 1
        if cohort.live == 0:
            cohort.closed.set()
            if self._open.get(group) is cohort:
                del self._open[group]

    def __len__(self) -> int:
        return len(self._open)
