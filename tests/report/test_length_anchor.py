"""The judge's slope measured on pairs (report.length_anchor): against statsmodels' OLS without a constant, a
bent judge recovered, one slope when a side has too few pairs, and the bootstrap interval covering the truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from length_release import Lengths, item_effects, judged, release_lengths
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.errors import DataError
from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions, build_leaderboard
from howtobench.report.length_anchor import Pair, length_change, pair_slope
from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED
from howtobench.report.render import to_json_data


def _pairs(n: int, below: float, above: float, seed: int = 0) -> list[Pair]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x0 = float(rng.normal(-0.4, 0.6))
        x1 = x0 + float(rng.choice([np.log(2.0), np.log(0.5)]))  # padded or trimmed
        quality = float(rng.normal(5, 1))

        def judge(x: float, q: float = quality) -> float:
            return q + below * min(x, 0.0) + above * max(x, 0.0) + float(rng.normal(0, 0.2))

        out.append(Pair(x0, x1, judge(x0), judge(x1)))
    return out


def test_equals_statsmodels_ols_without_a_constant() -> None:
    pairs = _pairs(200, 0.4, 2.0)
    slope = pair_slope(pairs, n_boot=0)
    assert slope is not None and slope.beta_above is not None
    d = length_change(pairs, True)
    dy = np.array([p.y_after - p.y_before for p in pairs])
    reference = sm.OLS(dy, d).fit()
    np.testing.assert_allclose([slope.beta, slope.beta_above], reference.params, atol=1e-12)


def test_a_judge_rewarding_length_above_the_reference_only_is_recovered_with_intervals() -> None:
    slope = pair_slope(_pairs(400, 0.0, 2.0, seed=3), n_boot=500, seed=1)
    assert slope is not None and slope.beta_ci is not None and slope.beta_above_ci is not None
    assert slope.beta_ci[0] < 0.0 < slope.beta_ci[1]
    assert slope.beta_above_ci[0] < 2.0 < slope.beta_above_ci[1]


def test_one_slope_when_a_side_has_too_few_pairs() -> None:
    pairs = [Pair(-1.0 - 0.01 * k, -0.5 - 0.01 * k, 5.0, 5.0 + 0.5 * 1.5) for k in range(30)]
    slope = pair_slope(pairs, n_boot=0)
    assert slope is not None and slope.beta_above is None and slope.beta == pytest.approx(1.5)
    assert pair_slope([], n_boot=0) is None
    assert pair_slope([Pair(0.1, 0.1, 5.0, 6.0)], n_boot=0) is None  # no length change: nothing to measure


# ---- through the leaderboard and the CLI, on the release's Open lengths -------------------------------------------

def _anchor_lengths(lengths: Lengths, n: int, seed: int = 3) -> Lengths:
    """Pad (×2) and truncate (×½) variants of `n` writings drawn across models and items."""
    rng = np.random.default_rng(seed)
    keys = sorted(lengths)
    out = {}
    for k in rng.choice(len(keys), n, replace=False):
        model, item = keys[int(k)]
        chars, ref = lengths[(model, item)]
        out[(f"{model}+pad", item)] = (2 * chars, ref)
        out[(f"{model}+truncate", item)] = (max(1, chars // 2), ref)
    return out


@pytest.fixture(scope="module")
def lengths(bench_root: Path) -> Lengths:
    return release_lengths(bench_root)


def test_padding_keeps_at_most_a_third_when_the_judge_pays_only_above_the_reference(lengths: Lengths) -> None:
    """Reward 2 per unit ln ratio above the reference, none below (80% of writings are below). One model's writings
    padded ×2 as another column: the raw gain is large; controlled, it keeps at most a third, with and without
    anchors (one pooled β kept +0.46 of +0.67)."""
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.3 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    padder = models[5]
    padded = {(f"{padder}+padded", i): (2 * c, r) for (m, i), (c, r) in lengths.items() if m == padder}

    def judge(model: str, item: str, x: float) -> float:
        return 5 + effect[model.split("+")[0]] + delta[item] + 2.0 * max(x, 0.0)

    rows = judged({**lengths, **padded}, judge)
    anchor = judged(_anchor_lengths(lengths, 200), judge, seed=9)
    for given in ((), anchor):
        board = build_leaderboard(rows, LeaderboardOptions(by="task", n_boot=50, length_controlled=True,
                                                           length_anchor=given))

        def gain(metric: str, b: Leaderboard = board) -> float:
            return b.cell(metric, "all", f"{padder}+padded").mean - b.cell(metric, "all", padder).mean  # type: ignore[union-attr,operator]

        assert gain("score") > 0.5 and gain(LENGTH_CONTROLLED) <= gain("score") / 3
    (fit,) = board.length_control.fits  # type: ignore[union-attr]
    assert fit.anchor is not None and fit.anchor.n == 400 and fit.anchor.beta_above_ci is not None
    assert fit.anchor.beta_above_ci[0] < 2.0 < fit.anchor.beta_above_ci[1]
    assert to_json_data(board)["length_control"]["fits"][0]["slope_used"] == "anchor"


def test_quality_that_grows_with_length_is_not_removed_when_the_judge_has_no_bias(lengths: Lengths) -> None:
    """Within each model longer writings are better (no judge bias at all): the observational slope removes real
    quality and reorders models; the anchor measures ≈ 0, the fit warns that they disagree, and the controlled
    order is the item-adjusted one."""
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.15 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    x_of = {k: float(np.log(c / r)) for k, (c, r) in lengths.items()}

    def quality(model: str, item: str) -> float:
        base = model.split("+")[0]
        return 5 + effect[base] + delta[item] + 1.0 * x_of[(base, item)]  # the content's quality: fixed per writing

    rows = judged(lengths, lambda m, i, x: quality(m, i))
    anchor = judged(_anchor_lengths(lengths, 200), lambda m, i, x: quality(m, i), seed=9)
    board = build_leaderboard(rows, LeaderboardOptions(by="task", n_boot=100, length_controlled=True,
                                                       length_anchor=anchor))
    (fit,) = board.length_control.fits  # type: ignore[union-attr]
    assert fit.beta > 0.5 and fit.anchor is not None and abs(fit.anchor.beta) < 0.1 and fit.disagrees
    assert any("disagrees with the judge's own, measured on 400 pad/trim pairs" in w for w in board.warnings)

    def order(metric: str) -> list[str]:
        means = {c: board.cell(metric, "all", c).mean for c in board.columns}  # type: ignore[union-attr]
        return sorted(means, key=lambda c: -means[c])  # type: ignore[operator]

    assert order(LENGTH_CONTROLLED) == order(ITEM_ADJUSTED)


def test_cli_takes_the_anchor_file_and_refuses_one_without_pairs(lengths: Lengths, tmp_path: Path) -> None:
    delta = item_effects(lengths)

    def judge(m: str, i: str, x: float) -> float:
        return 5 + delta[i] + 1.0 * x

    rows, anchor = judged(lengths, judge), judged(_anchor_lengths(lengths, 40), judge, seed=2)
    main, pairs = tmp_path / "tow.jsonl", tmp_path / "anchor.jsonl"
    main.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    pairs.write_text("".join(j.model_dump_json() + "\n" for j in anchor), encoding="utf-8")
    out = CliRunner().invoke(app, ["leaderboard", str(main), "--length-anchor", str(pairs), "--format", "json",
                                   "--by", "task", "--bootstrap", "0", "--no-progress"])
    assert out.exit_code == 0, out.output
    fit = json.loads(out.output)["length_control"]["fits"][0]
    assert fit["slope_used"] == "anchor" and fit["anchor"]["pairs"] == 80
    assert fit["anchor"]["beta"] == pytest.approx(1.0, abs=0.1)
    lonely = [j for j in anchor if j.model.endswith("+pad")][:1]
    with pytest.raises(DataError, match=r"^--length-anchor: 1 judgments \(tow\) give no pad/truncate pair"):
        build_leaderboard(rows[:50], LeaderboardOptions(length_controlled=True, length_anchor=[
            lonely[0].model_copy(update={"item_id": "nowhere"})]))
    other = [j.model_copy(update={"method": "single"}) for j in anchor]
    with pytest.raises(DataError, match="the anchor judgments are of single, the leaderboard of tow"):
        build_leaderboard(rows, LeaderboardOptions(length_controlled=True, n_boot=0, length_anchor=other))
