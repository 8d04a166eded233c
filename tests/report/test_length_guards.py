"""Length control that extremes cannot game, on crafted judgments over the release's real Open lengths (only a
fifth of the writings are longer than their reference): a stub writing 5% of the reference at the judge's floor,
a model missing the hardest items with no length effect at all, and the observed score range as a hard bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from length_release import Lengths, item_effects, judged, release_lengths

from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions, build_leaderboard
from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED
from howtobench.report.render import board_text, to_json_data


@pytest.fixture(scope="module")
def lengths(bench_root: Path) -> Lengths:
    return release_lengths(bench_root)


def _board(judgments: list, n_boot: int = 100) -> Leaderboard:  # type: ignore[type-arg]
    return build_leaderboard(judgments, LeaderboardOptions(by="task", n_boot=n_boot, length_controlled=True))


def _order(board: Leaderboard, metric: str) -> list[str]:
    means = {c: board.cell(metric, "all", c).mean for c in board.columns}  # type: ignore[union-attr]
    return sorted(means, key=lambda c: -means[c])  # type: ignore[operator]


def test_a_stub_at_five_percent_of_the_reference_is_flagged_and_stays_at_the_bottom(lengths: Lengths) -> None:
    """β = 1.5: the unbounded line gave the stub +1.5 · ln 20 = +4.5 points and 4th place of 11."""
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.3 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    stub = {("stub", i): (max(1, round(0.05 * ref)), ref) for (m, i), (_, ref) in lengths.items() if m == models[0]}

    def score(model: str, item: str, x: float) -> float:
        return 1.0 if model == "stub" else 5 + effect[model] + delta[item] + 1.5 * x

    board = _board(judged({**lengths, **stub}, score))
    order = _order(board, LENGTH_CONTROLLED)
    assert order.index("stub") >= len(order) - len(order) // 3  # the bottom third
    cell = board.cell(LENGTH_CONTROLLED, "all", "stub")
    assert cell is not None and cell.out_of_support
    assert not any(board.cell(LENGTH_CONTROLLED, "all", m).out_of_support for m in models)  # type: ignore[union-attr]
    records = [r for r in to_json_data(board)["cells"] if r["metric"] == LENGTH_CONTROLLED and r["row"] == "all"]
    stub_record = next(r for r in records if r["column"] == "stub")
    assert stub_record["out_of_support"] is True and stub_record["rank"] is None
    md = board_text(board, "markdown")
    assert f"{cell.mean:.2f}†" in md and "† more than 25% of the model's writings lie outside" in md
    assert any(w.startswith("stub (all): 100% of its writings lie outside") for w in board.warnings)


def test_no_controlled_value_or_bound_leaves_the_observed_scores(lengths: Lengths) -> None:
    """A steep judge (β = 3) near the top of the scale: the line would put long writers' corrections past 10."""
    delta = item_effects(lengths)
    board = _board(judged(lengths, lambda m, i, x: 8.5 + delta[i] + 3.0 * x))
    for fit in board.length_control.fits:  # type: ignore[union-attr]
        low, high = fit.score_range
        for (metric, _, _), c in board.length_control.cells.items():  # type: ignore[union-attr]
            if metric in (LENGTH_CONTROLLED, ITEM_ADJUSTED) and c.mean is not None:
                assert low <= c.mean <= high
                assert c.ci_low is None or low <= c.ci_low <= c.ci_high <= high  # type: ignore[operator]


def test_missing_hard_items_move_the_item_adjusted_column_and_length_control_adds_nothing(lengths: Lengths) -> None:
    """No length effect at all; one model never answered the 30% hardest items. Raw − item-adjusted is the
    missing-item part; item-adjusted ≈ length-controlled, so raw − controlled is not read as a length effect."""
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.3 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    hardest = set(sorted(delta, key=delta.get)[: int(0.3 * len(delta))])  # type: ignore[arg-type]
    gappy = models[3]
    kept = {k: v for k, v in lengths.items() if not (k[0] == gappy and k[1] in hardest)}
    board = _board(judged(kept, lambda m, i, x: 5 + effect[m] + delta[i]), n_boot=0)
    raw = board.cell("score", "all", gappy).mean  # type: ignore[union-attr]
    adjusted = board.cell(ITEM_ADJUSTED, "all", gappy).mean  # type: ignore[union-attr]
    controlled = board.cell(LENGTH_CONTROLLED, "all", gappy).mean  # type: ignore[union-attr]
    first = board.cell(ITEM_ADJUSTED, "all", models[0]).mean  # type: ignore[union-attr]
    assert raw - adjusted > 0.3  # type: ignore[operator]
    assert adjusted - first == pytest.approx(effect[gappy], abs=0.05)  # type: ignore[operator]
    assert controlled == pytest.approx(adjusted, abs=0.03)
    assert abs(board.length_control.fits[0].beta) < 0.05  # type: ignore[union-attr]


def test_a_planted_slope_is_recovered_within_its_interval_on_release_lengths(lengths: Lengths) -> None:
    delta = item_effects(lengths)
    rng = np.random.default_rng(5)
    effect = {m: float(rng.normal(0, 0.5)) for m in sorted({m for m, _ in lengths})}
    board = _board(judged(lengths, lambda m, i, x: 5 + effect[m] + delta[i] + 1.2 * x, clip=False), n_boot=200)
    (fit,) = board.length_control.fits  # type: ignore[union-attr]
    assert fit.beta_ci is not None and fit.beta_ci[0] < 1.2 < fit.beta_ci[1]
    assert fit.beta_above is not None and fit.beta_above_ci is not None  # bent at the reference
    assert fit.beta_above_ci[0] < 1.2 < fit.beta_above_ci[1]


def test_the_report_marks_an_extrapolated_cell(lengths: Lengths, tmp_path: Path) -> None:
    from howtobench.report.html import ReportOptions, build_report

    models = sorted({m for m, _ in lengths})
    stub = {("stub", i): (max(1, round(0.05 * ref)), ref) for (m, i), (_, ref) in lengths.items() if m == models[0]}
    delta = item_effects(lengths)
    rows = judged({**lengths, **stub}, lambda m, i, x: 1.0 if m == "stub" else 5 + delta[i] + 1.5 * x)
    path = tmp_path / "j.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    page = build_report([path], ReportOptions(n_boot=0, length_control=True))
    section = page[page.index('<section id="length-control">'):]
    section = section[: section.index("</section>")]
    line = section[section.index("<td>stub</td>"):]
    assert line[: line.index("</tr>")].count("†") == 2  # Open and All controlled
    assert "† more than 25% of the model&#39;s writings lie outside" in section
