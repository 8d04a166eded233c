"""The first screen's wording (llm/budget.py): durations read after "at most"."""

from __future__ import annotations

from howtobench.llm.budget import Lane, Quote, duration_text, first_screen


def test_durations_read_after_at_most() -> None:
    assert [duration_text(s) for s in (5, 29, 200, 3900)] == ["a minute", "a minute", "~3 min", "~1 h 05 min"]


def test_a_short_command_says_at_most_a_minute() -> None:
    """It printed "time: at most ~under a minute" (seen on `build classify` of six texts)."""
    quick = Quote((Lane("writer", "fb", 6, 11_898, 1_800, None, 8),))
    screen = first_screen("build classify", quick)
    assert "  time: at most a minute with 8 writer calls at once" in screen and "~under" not in screen
