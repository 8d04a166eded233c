"""Did every selected item get done? One tally feeds the `--max-failed-rate` stop and the exit status.

A writing-level failure (errors.py) is recorded on its row and the run goes on; when too many items
fail, going on only spends money on a broken setup (a judge that cannot follow the reply format, a
writer cut by its token limit). `FailureBudget.record` stops the run — cleanly: rows already written
stay, in-flight work is cancelled, a re-run resumes — as soon as the failed share passes the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from howtobench.errors import ConfigError, TooManyFailures

# The share is taken over at least this many items (or all of them, when fewer are selected), so the
# first failure of a long run does not read as "100% failed"; with a limit of 0 it still stops at once.
MIN_DENOMINATOR = 10


def check_rate(rate: float | None) -> float | None:
    """A failed-share limit is a fraction in [0, 1] (None: no limit)."""
    if rate is not None and not 0.0 <= rate <= 1.0:
        raise ConfigError(f"--max-failed-rate must be between 0 and 1, not {rate:g}")
    return rate


@dataclass
class FailureBudget:
    """Counts the items finished in this run and stops it when their failed share passes `max_rate`."""

    total: int
    max_rate: float | None = None
    noun: str = "items"
    finished: int = 0
    failed: int = 0

    def __post_init__(self) -> None:
        check_rate(self.max_rate)

    def record(self, failed: bool) -> None:
        """Count one finished item (already written); raises TooManyFailures when over the limit."""
        self.finished += 1
        self.failed += int(failed)
        if self.max_rate is None or not failed:
            return
        counted = max(self.finished, min(MIN_DENOMINATOR, self.total))
        share = self.failed / counted
        if share > self.max_rate:
            # the share the rule used: over at least the first 10 items, so 3 failed of 3 finished is 30%, not 100%
            basis = "" if counted == self.finished else f" of at least {counted} {self.noun}"
            raise TooManyFailures(
                f"stopped early: {self.failed} of the {self.finished} {self.noun} finished so far failed "
                f"({share:.0%}{basis}, over --max-failed-rate {self.max_rate:g}); what finished is "
                "saved, and re-running the same command resumes"
            )
