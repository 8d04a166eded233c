"""Length-controlled leaderboards: a regression worked by hand, crafted data where length and quality disagree,
lengths from older files, and the views (JSON cells, fits table)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.models import Item, Writing
from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED, sources_from
from howtobench.report.render import board_text, to_json_data
from howtobench.stats.length_fit import Observations, fit


def _j(model: str, item: str, score: float, chars: int | None, ref: int | None = 100, task: str = "guide",
       **nodes: float) -> Judgment:
    return Judgment(method="tow", item_id=item, model=model, task=task, genre="prose", score=score,
                    writing_chars=chars, reference_chars=ref if chars is not None else None, nodes=dict(nodes))


def hand_table() -> list[Judgment]:
    """A writes at the reference's length (100 chars) and scores 5, 6, 7; B writes 2, 4 and 8 times as long
    and scores 6, 9, 11. Within each item B − A = d = 1, 3, 4 against Δx = k·ln 2 (k = 1, 2, 3), so the
    least-squares line of d on k has slope 3/2 and intercept 8/3 − 2·3/2 = −1/3: β = 1.5 / ln 2, α_B = −1/3.
    The residuals sum to zero, so mean δ = mean of A's scores = 6: controlled A = 6, B = 6 − 1/3 = 17/3.
    Raw means: A 6, B 26/3 — the raw board puts B first, the controlled one A."""
    return [_j("A", f"i{k}", 4.0 + k, 100) for k in (1, 2, 3)] + [
        _j("B", f"i{k}", y, 100 * 2**k) for k, y in ((1, 6.0), (2, 9.0), (3, 11.0))
    ]


def bounded_b() -> float:
    """B's controlled value with the bound: B's 8× writing lies beyond the central 95% of the six log ratios (two
    models: the pooled range), but the bound only withholds credit, never a charge, so B pays the whole line:
    17/3, as without the bound (a padded writing is not excused for going beyond the others' lengths)."""
    return 17 / 3


def test_hand_computed_regression() -> None:
    board = build_leaderboard(hand_table(), LeaderboardOptions(by="task", n_boot=0, length_controlled=True))
    assert board.length_control is not None
    (f,) = board.length_control.fits
    assert f.beta == pytest.approx(1.5 / math.log(2))
    assert (f.quality.n_obs, f.quality.n_items, f.n_models) == (6, 3, 2)
    # residuals of d: -1/6, 1/3, -1/6, split half to each writing: RSS = (1/36 + 1/9 + 1/36) / 2 = 1/12
    assert f.quality.rmse == pytest.approx(math.sqrt(1 / 12 / 6))
    for row in ("guide", "all"):
        assert board.cell(LENGTH_CONTROLLED, row, "A").mean == pytest.approx(6.0)  # type: ignore[union-attr]
        assert board.cell(LENGTH_CONTROLLED, row, "B").mean == pytest.approx(bounded_b())  # type: ignore[union-attr]
    assert board.cell("score", "all", "B").mean == pytest.approx(26 / 3)  # type: ignore[union-attr]
    assert board.columns == ("B", "A")  # the order stays the raw one


def test_fit_matches_a_dense_least_squares_with_item_dummies() -> None:
    rng = np.random.default_rng(3)
    models, items = 4, 25
    m = np.repeat(np.arange(models), items)
    i = np.tile(np.arange(items), models)
    keep = rng.random(m.size) > 0.2  # missing writings: an unbalanced table
    m, i = m[keep], i[keep]
    x = rng.normal(size=m.size)
    y = np.array([0.0, 1, 2, 3])[m] + rng.normal(size=items)[i] + 2 * x + rng.normal(scale=0.5, size=m.size)
    result = fit(Observations(m, i, x, y, models, items))
    ref = int(np.argmax(np.bincount(m)))
    others = [k for k in range(models) if k != ref]
    dense = np.column_stack([(m[:, None] == np.array(others)).astype(float), x,
                             (i[:, None] == np.arange(items)).astype(float)])
    theta = np.linalg.lstsq(dense, y, rcond=None)[0]
    alpha = np.zeros(models)
    alpha[others] = theta[: models - 1]
    assert result.beta == pytest.approx(theta[models - 1])
    np.testing.assert_allclose(result.controlled, alpha + theta[models:].mean())
    resid = y - dense @ theta
    assert result.quality.r2 == pytest.approx(1 - resid @ resid / ((y - y.mean()) ** 2).sum())


def crafted(seed: int = 0) -> tuple[list[Judgment], list[str]]:
    """Four models whose true effects rise m1 < m2 < m3 < m4 while their writings get shorter (overlapping: each
    model's lengths mostly inside the others'), and a judge that rewards length (2 points per unit ln ratio): raw
    means rank the long writers first. Two tasks."""
    rng = np.random.default_rng(seed)
    truth = {"m1": 0.0, "m2": 0.5, "m3": 1.0, "m4": 1.5}
    out = []
    for task in ("guide", "open"):
        for k in range(60):
            difficulty = rng.normal(scale=1.0)
            for rank, (model, effect) in enumerate(truth.items()):
                log_ratio = 1.2 - 0.4 * rank + rng.normal(scale=0.5)  # m1 longest, m4 shortest
                chars = max(1, round(500 * math.exp(log_ratio)))
                score = 5 + effect + difficulty + 2.0 * math.log(chars / 500) + rng.normal(scale=0.3)
                out.append(_j(model, f"{task}{k}", score, chars, ref=500, task=task))
    return out, list(truth)


def test_controlled_all_row_orders_by_true_effects_and_raw_does_not() -> None:
    judgments, truth_order = crafted()
    board = build_leaderboard(judgments, LeaderboardOptions(by="task", n_boot=200, length_controlled=True))
    def order(metric: str) -> list[str]:
        means = {c: board.cell(metric, "all", c).mean for c in board.columns}  # type: ignore[union-attr]
        return sorted(means, key=lambda c: -means[c])  # type: ignore[operator]
    assert order(LENGTH_CONTROLLED) == truth_order[::-1]
    assert order("score")[0] == "m1" and order("score") != truth_order[::-1]
    assert board.length_control is not None
    for f in board.length_control.fits:
        assert f.beta == pytest.approx(2.0, abs=0.15)
        assert f.beta_ci is not None and f.beta_ci[0] < 2.0 < f.beta_ci[1]
    top = board.cell(LENGTH_CONTROLLED, "all", "m4")
    assert top is not None and top.ci_low is not None and top.ci_low < top.mean < top.ci_high  # type: ignore[operator]
    # m4 − m1 = 1.5 by construction, less what the bound withholds: m4's shortest writings get credit only down to
    # the lengths the others wrote (a quarter lie beyond; 2 x the mean excess 0.07). m1's long ones pay in full: the
    # bound withholds credit, never a charge. The intervals do not overlap
    low = board.cell(LENGTH_CONTROLLED, "all", "m1")
    gap = top.mean - low.mean  # type: ignore[union-attr,operator]
    assert 1.5 - 0.4 < gap < 1.5
    assert low.ci_high < top.ci_low  # type: ignore[union-attr,operator]


def test_older_judgments_take_lengths_from_writings_and_benchmark() -> None:
    stored = hand_table()
    bare = [j.model_copy(update={"writing_chars": None, "reference_chars": None}) for j in stored]
    with pytest.raises(DataError, match="6 scored judgments record no writing or reference length"):
        build_leaderboard(bare, LeaderboardOptions(by="task", n_boot=0, length_controlled=True))
    items = [Item(infer_id=f"i{k}", task_type="guide", basic_instruction="写", reference="参" * 100)
             for k in (1, 2, 3)]
    writings = [Writing(infer_id=j.item_id, model=j.model, output="字" * (j.writing_chars or 0)) for j in stored]
    board = build_leaderboard(bare, LeaderboardOptions(by="task", n_boot=0, length_controlled=True,
                              lengths=sources_from(items, writings)))
    assert board.cell(LENGTH_CONTROLLED, "all", "B").mean == pytest.approx(bounded_b())  # type: ignore[union-attr]


def test_a_scored_empty_writing_is_left_out_of_the_fit_and_said() -> None:
    judgments = [*hand_table(), _j("B", "i4", 1.0, 0), _j("A", "i4", 5.0, 100)]
    board = build_leaderboard(judgments, LeaderboardOptions(by="task", n_boot=0, length_controlled=True))
    assert board.length_control is not None and board.length_control.excluded == {"A": 0, "B": 1}
    assert any("B: 1 scored writings have no positive length" in w for w in board.warnings)
    assert board.length_control.fits[0].quality.n_obs == 7


def test_nodes_get_their_own_fits_and_views_carry_the_metric() -> None:
    judgments = [j.model_copy(update={"nodes": {"content": (j.score or 0) - 1}}) for j in hand_table()]
    board = build_leaderboard(judgments, LeaderboardOptions(by="task", n_boot=50, nodes=True, length_controlled=True))
    assert board.metrics == ("score", "content", ITEM_ADJUSTED, LENGTH_CONTROLLED, f"{ITEM_ADJUSTED}:content",
                             f"{LENGTH_CONTROLLED}:content")
    assert board.cell(f"{LENGTH_CONTROLLED}:content", "all", "A").mean == pytest.approx(5.0)  # type: ignore[union-attr]
    data = to_json_data(board)
    cells = [c for c in data["cells"] if c["metric"] == LENGTH_CONTROLLED]
    assert {(c["row"], c["column"]) for c in cells} == {("guide", "A"), ("guide", "B"), ("all", "A"), ("all", "B")}
    assert [f["metric"] for f in data["length_control"]["fits"]] == ["score", "content"]
    assert data["length_control"]["fits"][0]["beta"] == pytest.approx(1.5 / math.log(2), abs=1e-6)
    md = board_text(board, "markdown")
    assert "root score, length-controlled (predicted at the reference's length)" in md
    assert "### Length model fits" in md and "+2.164" in md


def test_cli_length_control_json(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_table()), encoding="utf-8")
    result = CliRunner().invoke(app, ["leaderboard", str(path), "--length-control", "--format", "json", "--by",
                                      "task", "--bootstrap", "0", "--no-progress"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    cell = next(c for c in data["cells"] if c["metric"] == LENGTH_CONTROLLED and c["row"] == "all"
                and c["column"] == "B")
    assert cell["mean"] == pytest.approx(round(bounded_b(), 4))
    assert "length-control" in data["signature"]


def test_report_shows_raw_and_controlled_side_by_side_with_a_plot(tmp_path: Path) -> None:
    from howtobench.report.html import ReportOptions, build_report

    path = tmp_path / "j.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_table()), encoding="utf-8")
    page = build_report([path], ReportOptions(n_boot=0, length_control=True))
    section = page[page.index('<section id="length-control">'):]
    section = section[: section.index("</section>")]
    assert ("<th>Guide raw</th><th>Guide item-adjusted</th><th>Guide controlled</th><th>All raw</th>"
            "<th>All item-adjusted</th><th>All controlled</th>") in section
    b = f"{bounded_b():.2f}†"  # every item judged: item-adjusted = raw; B's 8× writing (1 of 3) is out of support
    assert f"<td>B</td><td>8.67</td><td>8.67</td><td>{b}</td><td>8.67</td><td>8.67</td><td>{b}</td>" in section
    assert section.count("<polyline") == 2 and "+2.164" in section
    assert 'id="length-control"' not in build_report([path], ReportOptions(n_boot=0))
