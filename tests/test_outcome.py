"""The --max-failed-rate rule, by hand: failed / max(finished, min(10, total)) > rate stops the run."""

from __future__ import annotations

import pytest

from howtobench.errors import EXIT_TOO_MANY_FAILURES, ConfigError, TooManyFailures, is_run_level
from howtobench.outcome import FailureBudget


def stops_after(outcomes: list[bool], rate: float | None, total: int) -> int | None:
    """The number of items finished when the budget stops the run (None: it never does)."""
    budget = FailureBudget(total, rate, "judgments")
    for n, failed in enumerate(outcomes, 1):
        try:
            budget.record(failed)
        except TooManyFailures:
            return n
    return None


def test_the_share_is_taken_over_at_least_ten_items() -> None:
    assert stops_after([True] * 10, 0.2, total=100) == 3  # 3/10 > 0.2; 2/10 is not
    assert stops_after([True] * 10, 0.5, total=100) == 6  # 6/10 > 0.5
    assert stops_after([False] * 20 + [True] * 10, 0.2, total=100) == 26  # 6/26 > 0.2; 5/25 is not


def test_zero_stops_at_the_first_failure_and_none_never() -> None:
    assert stops_after([False, False, True], 0.0, total=100) == 3
    assert stops_after([True] * 50, None, total=100) is None


def test_small_selections_use_their_own_size() -> None:
    assert stops_after([True, True, True], 0.5, total=3) == 2  # 2/3 > 0.5
    assert stops_after([False, True, False], 0.5, total=3) is None


def test_the_stop_is_its_own_exit_status_and_stops_the_run() -> None:
    budget = FailureBudget(10, 0.1, "judgments")
    budget.record(True)  # 1/10 is not over 0.1
    with pytest.raises(TooManyFailures, match=r"2 of the 2 judgments finished so far failed \(20% of at least 10 "
                                              r"judgments, over "
                                              r"--max-failed-rate 0.1\)") as info:
        budget.record(True)
    assert info.value.exit_status == EXIT_TOO_MANY_FAILURES and is_run_level(info.value)
    with pytest.raises(ConfigError, match="between 0 and 1"):
        FailureBudget(10, 1.5)


def test_the_stop_line_gives_the_share_the_rule_used() -> None:
    """3 failed of the first 3 is 30% of the 10 the rule counts over, not 100% (the line said 100%)."""
    budget = FailureBudget(100, 0.2, "judgments")
    with pytest.raises(TooManyFailures) as stop:
        for _ in range(3):
            budget.record(True)
    assert str(stop.value).startswith("stopped early: 3 of the 3 judgments finished so far failed (30% of at least "
                                      "10 judgments, over --max-failed-rate 0.2); what finished is saved")
    past = FailureBudget(100, 0.2, "judgments")
    for failed in [False] * 20 + [True] * 5:
        past.record(failed)
    with pytest.raises(TooManyFailures, match=r"6 of the 26 judgments finished so far failed \(23%, over"):
        past.record(True)
