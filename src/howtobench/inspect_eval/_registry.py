"""inspect_ai's entry point (`[project.entry-points.inspect_ai]` in pyproject.toml): importing this module
registers the `howtobench/howtobench` task, the `howtobench/<method>` scorers and the leaderboard metric."""

from howtobench.inspect_eval.metrics import leaderboard
from howtobench.inspect_eval.scorers import autoplan, howtobench_judge, rubric, single, tow
from howtobench.inspect_eval.task import howtobench

__all__ = ["autoplan", "howtobench", "howtobench_judge", "leaderboard", "rubric", "single", "tow"]
