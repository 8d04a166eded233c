"""`--length-slopes per-model` (report.length_per_model): the own slopes against statsmodels and the library's
shrinkage, a bootstrap replicate equal to a refit on the drawn items, and on crafted judgments over the release's
real Open lengths a judge that rewards length for ONE model only: per-model control removes it, pooled leaves it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from length_release import Lengths, item_effects, judged, release_lengths
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.report.leaderboard import Leaderboard, LeaderboardOptions, build_leaderboard
from howtobench.report.length_control import LENGTH_CONTROLLED
from howtobench.report.render import board_text, to_json_data
from howtobench.stats import rng_for
from howtobench.stats.length_fit import Observations, bootstrap, fit
from howtobench.stats.length_slopes import item_fit, own_slopes, shrink, shrunk_slopes

PLANTED = np.array([0.5, 1.0, 2.0, 3.0])


def _crafted(n_items: int, seed: int = 0, missing: float = 0.0) -> Observations:
    """Four models with planted slopes, some writings missing (an unbalanced table), a bend above the reference."""
    rng = np.random.default_rng(seed)
    k = PLANTED.size
    model = np.tile(np.arange(k), n_items)
    item = np.repeat(np.arange(n_items), k)
    keep = rng.random(model.size) >= missing
    model, item = model[keep], item[keep]
    x = rng.normal(-0.3, 0.5, model.size)
    delta = rng.normal(5.0, 1.0, n_items)
    y = delta[item] + 0.3 * model + PLANTED[model] * x + 0.8 * np.maximum(x, 0) + rng.normal(0, 0.7, model.size)
    return Observations(model=model, item=item, x=x, y=y, n_models=k, n_items=n_items)


def test_own_slopes_equal_statsmodels_with_the_shared_bend_and_the_library_without() -> None:
    obs = _crafted(60, missing=0.15)
    ones = np.ones((1, obs.n_items))
    own, var = own_slopes(obs, True, ones)
    k = obs.n_models
    items = (obs.item[:, None] == np.arange(obs.n_items)[None, :]).astype(float)
    models = (obs.model[:, None] == np.arange(1, k)[None, :]).astype(float)
    slopes = (obs.model[:, None] == np.arange(k)[None, :]) * obs.x[:, None]
    ols = sm.OLS(obs.y, np.column_stack([items, models, slopes, np.maximum(obs.x, 0)])).fit()
    np.testing.assert_allclose(own[0], ols.params[-k - 1:-1], rtol=1e-8)
    np.testing.assert_allclose(var[0], ols.bse[-k - 1:-1] ** 2, rtol=1e-8)
    # one slope (no bend): the same numbers as stats.length_slopes.shrunk_slopes, shrinkage included
    flat = replace(obs, y=obs.y - 0.8 * np.maximum(obs.x, 0))
    library = shrunk_slopes(flat)
    own1, var1 = own_slopes(flat, False, ones)
    weight, shrunk, tau2 = shrink(own1, var1, np.array([library.pooled]))
    np.testing.assert_allclose(own1[0], library.own, rtol=1e-9)
    np.testing.assert_allclose(var1[0], library.own_var, rtol=1e-9)
    np.testing.assert_allclose(weight[0], library.weight, rtol=1e-9)
    np.testing.assert_allclose(shrunk[0], library.shrunk, rtol=1e-9)
    assert tau2[0] == pytest.approx(library.tau2, rel=1e-9) and tau2[0] > 0


def test_a_bootstrap_replicate_is_the_fit_on_the_drawn_items() -> None:
    """Item weights from a draw equal the same fit on a table where each drawn item is copied as often as drawn
    (the degrees of freedom too: a copy is an item of its own)."""
    obs = _crafted(40, seed=4, missing=0.1)
    drawn = np.random.default_rng(7).integers(0, obs.n_items, obs.n_items)
    weights = np.bincount(drawn, minlength=obs.n_items).astype(float)[None, :]
    rows = [np.flatnonzero(obs.item == i) for i in drawn]
    copied = Observations(model=np.concatenate([obs.model[r] for r in rows]),
                          item=np.concatenate([np.full(r.size, c) for c, r in enumerate(rows)]),
                          x=np.concatenate([obs.x[r] for r in rows]), y=np.concatenate([obs.y[r] for r in rows]),
                          n_models=obs.n_models, n_items=len(rows))
    ones = np.ones((1, copied.n_items))
    for got, want in zip(own_slopes(obs, True, weights), own_slopes(copied, True, ones), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-8)
    np.testing.assert_allclose(item_fit(obs, obs.y[None, :], weights), item_fit(copied, copied.y[None, :], ones),
                               rtol=1e-9)


def test_the_model_and_item_fit_equals_the_length_free_fit_and_its_bootstrap() -> None:
    obs = _crafted(50, seed=2, missing=0.2)
    point = fit(obs)
    assert point.item_adjusted is not None
    np.testing.assert_allclose(item_fit(obs, obs.y[None, :], np.ones((1, obs.n_items)))[0], point.item_adjusted,
                               rtol=1e-9)
    reps = bootstrap(obs, 30, rng_for(0, "x"))
    draws = rng_for(0, "x").integers(0, obs.n_items, size=(30, obs.n_items))  # every item has a writing
    weights = np.stack([np.bincount(d, minlength=obs.n_items) for d in draws]).astype(float)
    assert reps.item_adjusted is not None
    np.testing.assert_allclose(item_fit(obs, np.tile(obs.y, (30, 1)), weights), reps.item_adjusted,
                               rtol=1e-9)


# ---- a length reward given to one model only, on the release's Open lengths --------------------------------------

REWARD = 1.0
"""Points per unit ln length ratio the judge gives the favoured model's writings only (others: no length effect)."""


@pytest.fixture(scope="module")
def lengths(bench_root: Path) -> Lengths:
    return release_lengths(bench_root)


@pytest.fixture(scope="module")
def rewarded(lengths: Lengths) -> tuple[list, str, dict[str, float]]:  # type: ignore[type-arg]
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.3 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    favoured = models[4]
    rows = judged(lengths, lambda m, i, x: 5 + effect[m] + delta[i] + (REWARD * x if m == favoured else 0.0))
    return rows, favoured, effect


def _board(rows: list, slopes: str, n_boot: int = 100, **more: object) -> Leaderboard:  # type: ignore[type-arg]
    return build_leaderboard(rows, LeaderboardOptions(by="task", n_boot=n_boot, length_controlled=True,
                                                      length_slopes=slopes, **more))  # type: ignore[arg-type]


def _error(board: Leaderboard, favoured: str, effect: dict[str, float]) -> float:
    """The favoured model's controlled gap to the mean of the others, less the planted gap (its quality)."""
    value = {c: board.cell(LENGTH_CONTROLLED, "all", c).mean for c in board.columns}  # type: ignore[union-attr]
    others = [c for c in board.columns if c != favoured]
    gap = value[favoured] - np.mean([value[c] for c in others])  # type: ignore[operator]
    return float(gap - (effect[favoured] - np.mean([effect[c] for c in others])))


def test_per_model_slopes_remove_a_length_reward_given_to_one_model_only(
        rewarded: tuple[list, str, dict[str, float]]) -> None:  # type: ignore[type-arg]
    """Pooled: one slope for ten models learns ~0.04 and leaves the favoured model 0.64 off (its writings are
    shorter than the reference: the reward costs it). Per-model: within 0.15, the favoured slope ≈ the reward and
    the others ≈ 0; intervals around every value, inside the observed scores, wider than nothing."""
    rows, favoured, effect = rewarded
    pooled, per_model = _board(rows, "pooled"), _board(rows, "per-model")
    assert abs(_error(pooled, favoured, effect)) > 0.4
    assert abs(_error(per_model, favoured, effect)) < 0.15
    (fit_,) = per_model.length_control.fits  # type: ignore[union-attr]
    assert fit_.per_model[favoured].below == pytest.approx(REWARD, abs=0.15)
    assert fit_.per_model[favoured].above == pytest.approx(REWARD, abs=0.25)
    assert all(abs(s.below) < 0.15 for m, s in fit_.per_model.items() if m != favoured)
    ci = fit_.per_model[favoured].below_ci
    assert ci is not None and ci[0] < fit_.per_model[favoured].below < ci[1]
    low, high = fit_.score_range
    for col in per_model.columns:
        cell = per_model.cell(LENGTH_CONTROLLED, "all", col)
        assert cell is not None and cell.ci_low is not None and cell.ci_high is not None
        assert low <= cell.ci_low < cell.mean < cell.ci_high <= high  # type: ignore[operator]
    favoured_pooled = pooled.cell(LENGTH_CONTROLLED, "all", favoured)
    favoured_per_model = per_model.cell(LENGTH_CONTROLLED, "all", favoured)
    assert favoured_pooled is not None and favoured_per_model is not None
    assert favoured_per_model.ci_low > favoured_pooled.ci_high  # type: ignore[operator]  # the intervals moved too
    assert pooled.length_control.slopes == "pooled" and not pooled.length_control.fits[0].per_model  # type: ignore[union-attr]


def test_with_an_anchor_the_deviation_is_added_to_the_measured_slope(lengths: Lengths,
        rewarded: tuple[list, str, dict[str, float]]) -> None:  # type: ignore[type-arg]
    """Anchor pairs drawn across models measure the pooled response; the favoured model's own deviation is added
    to it, so per-model control with an anchor removes the one-model reward as well."""
    rows, favoured, effect = rewarded
    from test_length_anchor import _anchor_lengths

    delta = item_effects(lengths)
    anchor = judged(_anchor_lengths(lengths, 200),
                    lambda m, i, x: 5 + effect[m.split("+")[0]] + delta[i]
                    + (REWARD * x if m.split("+")[0] == favoured else 0.0), seed=9)
    pooled = _board(rows, "pooled", n_boot=0, length_anchor=anchor)
    board = _board(rows, "per-model", n_boot=0, length_anchor=anchor)
    (fit_,) = board.length_control.fits  # type: ignore[union-attr]
    assert fit_.anchor is not None
    assert fit_.per_model[favoured].below == pytest.approx(fit_.anchor.beta + (fit_.per_model[favoured].own
                                                                               - fit_.beta)
                                                           * fit_.per_model[favoured].weight, abs=1e-9)
    assert abs(_error(board, favoured, effect)) < 0.15 < abs(_error(pooled, favoured, effect))


def test_per_model_slopes_stay_bounded_and_flag_a_stub(lengths: Lengths) -> None:
    """The stub of test_length_guards (5% of the reference, at the judge's floor) under per-model slopes: its own
    slope is 0 (a flat floor), the correction is still clipped to the others' lengths, flagged †, bottom third."""
    models = sorted({m for m, _ in lengths})
    effect = {m: 0.3 * k for k, m in enumerate(models)}
    delta = item_effects(lengths)
    stub = {("stub", i): (max(1, round(0.05 * ref)), ref) for (m, i), (_, ref) in lengths.items() if m == models[0]}
    rows = judged({**lengths, **stub}, lambda m, i, x: 1.0 if m == "stub" else 5 + effect[m] + delta[i] + 1.5 * x)
    board = _board(rows, "per-model", n_boot=50)
    means = {c: board.cell(LENGTH_CONTROLLED, "all", c).mean for c in board.columns}  # type: ignore[union-attr]
    order = sorted(means, key=lambda c: -means[c])  # type: ignore[operator]
    assert order.index("stub") >= len(order) - len(order) // 3
    assert board.cell(LENGTH_CONTROLLED, "all", "stub").out_of_support  # type: ignore[union-attr]
    (fit_,) = board.length_control.fits  # type: ignore[union-attr]
    low, high = fit_.score_range
    for (metric, _, _), c in board.length_control.cells.items():  # type: ignore[union-attr]
        if metric == LENGTH_CONTROLLED and c.mean is not None:
            assert low <= c.mean <= high and (c.ci_low is None or low <= c.ci_low <= c.ci_high <= high)  # type: ignore[operator]


def test_the_cli_names_the_mode_and_prints_the_slopes(rewarded: tuple[list, str, dict[str, float]],  # type: ignore[type-arg]
                                                      tmp_path: Path) -> None:
    rows, favoured, _ = rewarded
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    base = ["leaderboard", str(path), "--length-control", "--by", "task", "--bootstrap", "20", "--no-progress"]
    out = CliRunner().invoke(app, [*base, "--length-slopes", "per-model", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    fit_ = data["length_control"]["fits"][0]
    assert data["length_control"]["slopes"] == "per-model" and fit_["slopes"] == "per-model"
    assert fit_["per_model"][favoured]["below"] == pytest.approx(REWARD, abs=0.15)
    assert set(fit_["per_model"]) == {c for c in data["columns"]} and fit_["tau2"] > 0
    assert "+per-model-slopes" in data["signature"]
    md = CliRunner().invoke(app, [*base, "--length-slopes", "per-model", "--format", "markdown"])
    assert md.exit_code == 0, md.output
    assert "Length slopes: per-model" in md.output and "### Per-model length slopes" in md.output
    line = next(x for x in md.output.splitlines() if x.startswith(f"| Open | {favoured} |"))
    assert f"{fit_['per_model'][favoured]['below']:+.3f} [" in line
    pooled = CliRunner().invoke(app, [*base, "--format", "json"])
    assert json.loads(pooled.output)["length_control"]["slopes"] == "pooled"
    assert json.loads(pooled.output)["length_control"]["fits"][0]["per_model"] is None
    bad = subprocess.run([sys.executable, "-m", "howtobench", *base, "--length-slopes", "permodel"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "error: --length-slopes: Value error, 'permodel' is not one of 'pooled', 'per-model'. (see python -m "
        "howtobench leaderboard --help)"]


def test_the_report_shows_the_mode_and_the_slopes(rewarded: tuple[list, str, dict[str, float]],  # type: ignore[type-arg]
                                                  tmp_path: Path) -> None:
    from howtobench.report.html import ReportOptions, build_report

    rows, favoured, _ = rewarded
    path = tmp_path / "j.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    page = build_report([path], ReportOptions(n_boot=0, length_slopes="per-model"))
    section = page[page.index('<section id="length-control">'):]
    section = section[: section.index("</section>")]
    assert "Length slopes: per-model" in section and "<h3>Per-model length slopes</h3>" in section
    assert f"<td>{favoured}</td>" in section[section.index("Per-model length slopes</h3>"):]
    pooled = build_report([path], ReportOptions(n_boot=0, length_control=True))
    assert "Length slopes: pooled" in pooled and "Per-model length slopes</h3>" not in pooled


def test_terminal_output_names_the_mode(rewarded: tuple[list, str, dict[str, float]]) -> None:  # type: ignore[type-arg]
    rows, favoured, _ = rewarded
    board = _board(rows, "per-model", n_boot=0)
    text = board_text(board, "table")
    assert "Length slopes: per-model" in text and favoured in text[text.index("Per-model length slopes"):]
    assert to_json_data(board)["length_control"]["fits"][0]["slope_used"] == "association"
