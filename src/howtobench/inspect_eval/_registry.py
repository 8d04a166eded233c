"""inspect_ai's entry point (`[project.entry-points.inspect_ai]` in pyproject.toml): importing this module
registers the `howtobench/howtobench` task, the `howtobench/<method>` scorers and the leaderboard metric."""

from howtobench.inspect_eval.metrics import leaderboard
from howtobench.inspect_eval.scorers import howtobench_judge, named_scorers
from howtobench.inspect_eval.task import howtobench

# `howtobench/tow`, `howtobench/rubric`, ... and every installed plugin's method that has a scorer of its own
globals().update(named_scorers())

__all__ = ["howtobench", "howtobench_judge", "leaderboard", *named_scorers()]
