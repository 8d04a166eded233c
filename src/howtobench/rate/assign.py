"""Who rates what: each rater's queue of instructions, the next one to take, and progress.

The paper's protocol (section 5.2): one rater rates every writing of an instruction, and every writing
gets `raters_per_writing` raters (two by default). So raters take whole instructions: the next one is
the first, in the study's seeded order, that the rater does not hold yet and that fewer than
`raters_per_writing` raters hold. A skipped instruction is released to the next rater; rating it later
takes it back. Raters move in the same order, so pairs complete early and agreement can be read
while the study runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from howtobench.rate.study import Study


@dataclass(frozen=True)
class GroupState:
    """One instruction in a rater's queue."""

    item_id: str
    rated: int
    total: int
    skipped: bool

    @property
    def done(self) -> bool:
        return self.rated >= self.total


@dataclass(frozen=True)
class Progress:
    """A rater's queue and the study's coverage, as the page and `rate status` show them."""

    rater: str
    groups: tuple[GroupState, ...]
    writings_covered: int
    writings_total: int

    @property
    def responses_rated(self) -> int:
        return sum(g.rated for g in self.groups if not g.skipped)

    @property
    def responses_total(self) -> int:
        return sum(g.total for g in self.groups if not g.skipped)

    @property
    def groups_done(self) -> int:
        return sum(g.done for g in self.groups if not g.skipped)

    @property
    def skipped(self) -> int:
        return sum(g.skipped for g in self.groups)

    def neighbours(self, item_id: str) -> tuple[str | None, str | None]:
        """The instructions before and after `item_id` in the rater's queue."""
        ids = [g.item_id for g in self.groups]
        if item_id not in ids:
            return None, None
        i = ids.index(item_id)
        return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

    def holds(self, item_id: str) -> bool:
        return any(g.item_id == item_id for g in self.groups)


def progress(study: Study, rater: str) -> Progress:
    """The rater's queue with complete ratings per instruction, and how many writings have all their raters."""
    totals = study.store.writing_counts()
    rated = study.store.complete_counts(rater)
    groups = tuple(
        GroupState(c.item_id, rated.get(c.item_id, 0), totals.get(c.item_id, 0), c.skipped)
        for c in study.store.claims(rater)
    )
    covered = study.store.writings_rated(study.settings.raters_per_writing)
    return Progress(rater, groups, covered, sum(totals.values()))


def take_next(study: Study, rater: str) -> str | None:
    """Give the rater a new instruction; None when every instruction has its raters."""
    return study.store.claim_next(rater, study.settings.raters_per_writing)


def current_item(study: Study, rater: str) -> str | None:
    """Where a rater lands: their first unfinished, unskipped instruction, else a new one, else None (done)."""
    for group in progress(study, rater).groups:
        if not group.skipped and not group.done:
            return group.item_id
    return take_next(study, rater)
