"""Cheap deterministic checks before any judge call (docs/guard.md): the signals of a writing (`signals`), the
named rules with their thresholds (`rules`), the guard in front of a judge (`guard`) and what the rules would flag
in a set of writings (`survey`)."""

from howtobench.guard.guard import Guard, GuardedJudge, GuardSettings, Verdict, guarded
from howtobench.guard.signals import Signals, signals

__all__ = ["Guard", "GuardSettings", "GuardedJudge", "Signals", "Verdict", "guarded", "signals"]
