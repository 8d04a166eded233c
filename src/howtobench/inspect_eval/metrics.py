"""The leaderboard's means as an inspect metric: computed by `report.leaderboard`, not re-derived here.

`leaderboard()` rebuilds each scored sample's `Judgment` from its Score metadata and hands them to
`build_leaderboard`, the code behind `howtobench leaderboard`, then reads its cells: `all`, one mean per
task (`completion`, `guide`, `open`) and per Table 4 genre, and the node means over all items (`content`,
`format`, `impression`). Unscored samples never reach a metric — inspect filters them and counts them as
unscored: failed judgments (the leaderboard counts failures, never averages them) and, by default, empty
writings (the leaderboard's default `--empty exclude`; the scorers' `empty="lowest"` scores them instead).

With `--epochs` > 1 the root of each sample is inspect's reduced value (mean over epochs); the node means
then come from the first epoch's judgment (inspect keeps the first score's metadata when reducing).
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, metric

from howtobench.data.paper import ALL_ROW
from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import SCORE, LeaderboardOptions, build_leaderboard


def _judgment(sample: SampleScore) -> Judgment | None:
    record = (sample.score.metadata or {}).get("judgment")
    if not isinstance(record, dict):
        return None
    judgment = Judgment.model_validate(record)
    value = sample.score.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # the reduced value under epochs
        judgment = judgment.model_copy(update={"score": float(value)})
    return judgment


def leaderboard_means(judgments: list[Judgment]) -> dict[str, float]:
    """{"all", task, genre, node: mean} of one model's judgments, as `build_leaderboard` computes them."""
    if not judgments:
        return {}
    # empty writings reach a metric only when the scorer counts them (empty="lowest"): count them, then
    board = build_leaderboard(judgments, LeaderboardOptions(nodes=True, n_boot=0, empty="lowest"))
    if len(board.columns) != 1:  # an eval judges one model; anything else is not one leaderboard column
        raise DataError(f"expected the judgments of one model, got {', '.join(board.columns)}")
    column = board.columns[0]
    cells = [(row.key, board.cell(SCORE, row.key, column)) for row in board.rows]
    cells += [(node, board.cell(node, ALL_ROW, column)) for node in board.metrics[1:]]
    return {name: cell.mean for name, cell in cells if cell is not None and cell.mean is not None}


@metric(name="leaderboard")
def leaderboard() -> Metric:
    """Means per task, genre and node and over all items, exactly as `howtobench leaderboard` reports them."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return leaderboard_means([j for j in map(_judgment, scores) if j is not None])

    return compute
