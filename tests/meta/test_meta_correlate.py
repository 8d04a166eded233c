"""Correlations with humans on constructed data whose values are known exactly."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from meta_helpers import judgment, sampled
from scipy import stats

from howtobench.judges.base import Judgment, LeafResult
from howtobench.meta.correlate import (
    CorrelationSettings,
    correlate_method,
    correlate_scores,
    sample_scores,
    score_row,
)
from howtobench.meta.correlate_table import correlation_table
from howtobench.stats import kendall_rows, pearson_rows, spearman_rows

MODELS = ["a", "b", "c", "d"]
FAST = CorrelationSettings(n_boot=200, seed=7)
PCT = CorrelationSettings(n_boot=200, seed=7, interval="percentile")


def test_row_functions_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(1, 5, size=(20, 9)).astype(float)
    y = x + rng.integers(-2, 3, size=(20, 9))
    for r in range(20):
        assert pearson_rows(x, y)[r] == pytest.approx(stats.pearsonr(x[r], y[r])[0])
        assert spearman_rows(x, y)[r] == pytest.approx(stats.spearmanr(x[r], y[r])[0])
        assert kendall_rows(x, y)[r] == pytest.approx(stats.kendalltau(x[r], y[r])[0])
    assert np.isnan(pearson_rows(np.ones((1, 3)), np.arange(3.0)[None, :]))[0]


def _human() -> dict[tuple[str, str], float]:
    # item i1: a<b<c<d ; item i2: a<b<d<c (one swap) ; item i3 is completion: identical order to i1
    return {
        **{("i1", m): float(k + 1) for k, m in enumerate(MODELS)},
        **{("i2", m): v for m, v in zip(MODELS, [1.0, 2.0, 4.0, 3.0], strict=True)},
        **{("i3", m): float(k + 1) for k, m in enumerate(MODELS)},
    }


def test_known_values_system_and_sample_level() -> None:
    human = _human()
    judge = {key: 2 * v + 1 for key, v in human.items()}  # affine in every item -> perfect everywhere
    judge[("i2", "c")], judge[("i2", "d")] = 7.0, 9.0  # i2 judged a<b<c<d: one discordant pair of 6
    tasks = {"i1": "guide", "i2": "guide", "i3": "completion"}
    cells, n_items, n_models = correlate_scores(judge, human, tasks, FAST)
    assert n_items == {(level, task): n for level in ("system", "sample")
                       for task, n in (("completion", 1), ("guide", 2), ("all", 3))}
    assert n_models["guide"] == 4
    # sample level, guide: mean of i1 (perfect) and i2 (tau = (5-1)/6, rho = 0.8, r = 0.8)
    assert cells[("sample", "guide", "kendall")].value == pytest.approx((1 + 4 / 6) / 2)
    assert cells[("sample", "guide", "spearman")].value == pytest.approx((1 + 0.8) / 2)
    assert cells[("sample", "guide", "pearson")].value == pytest.approx((1 + 0.8) / 2)
    # system level, guide: human means (1,2,3.5,3.5), judge means (3,5,7,9)
    hm, jm = [1, 2, 3.5, 3.5], [3, 5, 7, 9]
    assert cells[("system", "guide", "pearson")].value == pytest.approx(stats.pearsonr(jm, hm)[0])
    assert cells[("system", "guide", "kendall")].value == pytest.approx(stats.kendalltau(jm, hm)[0])
    assert cells[("system", "completion", "spearman")].value == pytest.approx(1.0)
    assert ("system", "open", "pearson") not in cells


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(3)
    human = {(f"i{i}", m): float(rng.integers(1, 6)) for i in range(30) for m in MODELS}
    judge = {k: v + rng.normal(0, 1) for k, v in human.items()}
    tasks = {f"i{i}": "open" for i in range(30)}
    first, _, _ = correlate_scores(judge, human, tasks, FAST)
    again, _, _ = correlate_scores(judge, human, tasks, FAST)
    assert first == again
    for est in first.values():
        assert est.low <= est.value <= est.high or np.isnan(est.value)
    other, _, _ = correlate_scores(judge, human, tasks, CorrelationSettings(n_boot=200, seed=8))
    assert other[("sample", "all", "pearson")].low != first[("sample", "all", "pearson")].low


def test_self_consistency_worst_best_mean_and_cost() -> None:
    human = {(f"i{i}", m): float(k + 1) for i in range(3) for k, m in enumerate(MODELS)}
    js = [
        # sample 0 agrees with humans, sample 1 reverses them; their mean (2.5 everywhere) is constant
        sampled(i, m, [float(k + 1), float(4 - k)], cost=0.5)
        for i in ("i0", "i1", "i2")
        for k, m in enumerate(MODELS)
    ]
    worst, best, mean = correlate_method("Auto-Plan", js, human, FAST)
    assert worst.method == "Auto-Plan - worst (sample 1)" and best.method == "Auto-Plan - best (sample 0)"
    assert (worst.sample, best.sample) == (1, 0)
    assert mean.method == "Auto-Plan + SC (n=2)"
    assert worst.cells[("system", "all", "kendall")].value == pytest.approx(-1.0)
    assert best.cells[("sample", "guide", "spearman")].value == pytest.approx(1.0)
    assert np.isnan(mean.cells[("system", "all", "pearson")].value)
    assert mean.cost_usd == pytest.approx(6.0) and worst.cost_usd == pytest.approx(3.0)


def _two_samples() -> tuple[dict, list[Judgment]]:
    """Sample 0 ranks the four models right on the guide items and wrong on the completion item; sample 1 the
    other way round, on fewer guide items than completion ones... so sample 0 is better overall (All) but worse
    on Comp: the cell-by-cell minimum would mix them, as Table 3's rubric rows show it did not."""
    items = {"g0": "guide", "g1": "guide", "g2": "guide", "c0": "completion"}
    human = {(i, m): float(k + 1) for i in items for k, m in enumerate(MODELS)}
    right, wrong = [1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]
    js = [sampled(i, m, [(wrong if t == "completion" else right)[k], (right if t == "completion" else [2.0, 1.0, 4.0,
                         3.0])[k]], task=t) for i, t in items.items() for k, m in enumerate(MODELS)]
    return human, js


def test_worst_and_best_are_whole_samples_ranked_by_system_all() -> None:
    """Every cell of a worst / best row comes from one sample, the one ranked by the system-level All Spearman:
    here the worst row's Comp ρ is above the best row's (as Table 3's rubric rows, 0.86 vs 0.84)."""
    human, js = _two_samples()
    worst, best, _ = correlate_method("Rubric", js, human, FAST)
    per_sample = [score_row("x", None, sample_scores(js, k), human, {j.item_id: j.task for j in js}, FAST)
                  for k in range(2)]
    assert per_sample[0].cells[("system", "all", "spearman")].value > \
        per_sample[1].cells[("system", "all", "spearman")].value
    assert (worst.sample, best.sample) == (1, 0)
    assert worst.cells == per_sample[1].cells and best.cells == per_sample[0].cells
    assert worst.n_items == per_sample[1].n_items and best.n_models == per_sample[0].n_models
    comp = ("system", "completion", "pearson")
    assert worst.cells[comp].value > best.cells[comp].value
    table = correlation_table([worst, best], "system")
    assert [row[0] for row in table.rows] == ["Rubric - worst (sample 1)", "Rubric - best (sample 0)"]


def test_the_ranking_statistic_is_an_option() -> None:
    human, js = _two_samples()
    by_tau = CorrelationSettings(n_boot=0, rank_by="kendall")
    worst, best, _ = correlate_method("Rubric", js, human, by_tau)
    assert (worst.sample, best.sample) == (1, 0) and worst.settings.rank_by == "kendall"
    with pytest.raises(ValueError, match="rank_by must be one of pearson, kendall, spearman"):
        CorrelationSettings(rank_by="mean")


def test_worst_and_best_rows_count_the_items_of_their_own_sample() -> None:
    """Sample 1 reverses the humans but failed on (i2, a), so under the "common" policy its system level rests on
    i0 and i1 only; the worst row is sample 1 and must say 2 items, not sample 0's 3."""
    human = {(f"i{i}", m): float(k + 1) for i in range(3) for k, m in enumerate(MODELS)}
    js = [sampled(i, m, [float(k + 1), None if (i, m) == ("i2", "a") else float(4 - k)])
          for i in ("i0", "i1", "i2") for k, m in enumerate(MODELS)]
    worst, best, _ = correlate_method("Auto-Plan", js, human, FAST)
    assert worst.cells[("system", "guide", "kendall")].value == pytest.approx(-1.0)
    assert best.cells[("system", "guide", "kendall")].value == pytest.approx(1.0)
    assert worst.n_items == {("system", "guide"): 2, ("system", "all"): 2, ("sample", "guide"): 3,
                             ("sample", "all"): 3}
    assert best.n_items == {("system", "guide"): 3, ("system", "all"): 3, ("sample", "guide"): 3,
                            ("sample", "all"): 3}
    table = correlation_table([worst, best], "system")
    items = table.columns.index("Guide items")
    assert [row[items] for row in table.rows] == [2, 3]
    assert "items rated for every model, of all rated items (Auto-Plan - worst (sample 1)): Comp 0 of 0, Guide 2 " \
           "of 3, Open 0 of 0, All 2 of 3" in table.notes


def test_a_sample_that_could_not_compute_a_task_leaves_it_empty_in_its_row() -> None:
    """Sample 0 failed on every writing of the completion item: a row that is sample 0 has no completion cells
    (whole samples: nothing is borrowed from sample 1), the row that is sample 1 has them."""
    human = {(i, m): float(k + 1) for i in ("i0", "i1", "c0") for k, m in enumerate(MODELS)}
    js = [sampled(i, m, [None if i == "c0" else float(k + 1), float(k + 1)],
                  task="completion" if i == "c0" else "guide")
          for i in ("i0", "i1", "c0") for k, m in enumerate(MODELS)]
    rows = correlate_method("Auto-Plan", js, human, FAST)[:2]
    by_sample = {row.sample: row for row in rows}
    assert ("sample", "completion", "kendall") not in by_sample[0].cells
    assert 1 not in by_sample or by_sample[1].cells[("sample", "completion", "kendall")].value == pytest.approx(1.0)


def test_failed_scores_are_left_out_and_table_shape() -> None:
    human = _human()
    js = [judgment(i, m, None if (i, m) == ("i1", "a") else v, task="guide") for (i, m), v in human.items()]
    (row,) = correlate_method("ToW", js, human, FAST)
    assert row.cost_usd is None
    assert row.n_models["all"] == 4
    table = correlation_table([row], "system")
    assert table.columns[:5] == ["Method", "Cost ($)", "Comp ρ", "Comp τ", "Comp σ"]
    assert table.columns[14:] == ["Comp items", "Guide items", "Open items", "All items", "interval", "items used",
                                  "empty writings", "empty"]
    assert table.rows[0][13].startswith("1.00 [")
    # i1 lost model a's judgment, so only i2 and i3 (all judged as guide) are judged and rated for every model
    assert table.rows[0][14:] == [0, 2, 0, 2, "BCa 95% bootstrap over items, 200×",
                                  "common: items rated for every model", 0, "exclude: left out"]
    assert "(system level; common: items rated for every model; BCa 95% intervals)" in table.title
    assert "items rated for every model, of all rated items (ToW): Comp 0 of 0, Guide 2 of 3, Open 0 of 0, All 2 of 3" \
        in table.notes
    cols = correlation_table([row], "sample", ci="columns")
    assert cols.columns[2:5] == ["Comp ρ", "Comp ρ low", "Comp ρ high"]


def _exact_mean(values: list[float]) -> float:
    """The mean of the decimal numbers as written, exactly (Fraction), then to float: equal means are equal floats."""
    return float(sum(Fraction(str(v)) for v in values) / len(values))


def test_equal_model_means_are_ties() -> None:
    # a's judge scores 1.1, 8.2, 1.2 average exactly 3.5 (b's mean), but summed in floats they give 3.4999999999999996
    judge_scores = {"a": [1.1, 8.2, 1.2], "b": [3.5] * 3, "c": [2.0] * 3, "d": [5.0] * 3, "e": [4.0] * 3}
    human_scores = {"a": 3.0, "b": 4.0, "c": 2.0, "d": 5.0, "e": 1.0}
    assert np.mean(judge_scores["a"]) != 3.5  # the rounding error this test is about
    judge = {(f"i{k}", m): v[k] for m, v in judge_scores.items() for k in range(3)}
    human = {(f"i{k}", m): v for m, v in human_scores.items() for k in range(3)}
    cells, _, _ = correlate_scores(judge, human, dict.fromkeys(["i0", "i1", "i2"], "guide"), PCT)
    models = sorted(judge_scores)
    jm = [_exact_mean(judge_scores[m]) for m in models]
    hm = [human_scores[m] for m in models]
    assert cells[("system", "guide", "kendall")].value == pytest.approx(stats.kendalltau(jm, hm)[0], abs=1e-12)
    assert cells[("system", "guide", "spearman")].value == pytest.approx(stats.spearmanr(jm, hm)[0], abs=1e-12)
    assert cells[("system", "guide", "pearson")].value == pytest.approx(stats.pearsonr(jm, hm)[0], abs=1e-9)
    # tau-b with the a/b tie: 6 concordant, 3 discordant, one judge tie -> 3 / sqrt(9 * 10)
    assert cells[("system", "guide", "kendall")].value == pytest.approx(3 / np.sqrt(90))


def test_system_means_use_the_items_rated_for_every_model() -> None:
    human = {(f"i{i}", m): float(v) for i, row in enumerate([[1, 2, 3], [2, 4, 1], [3, 1, 5]])
             for m, v in zip("abc", row, strict=True)}
    judge = {key: value + 0.5 * (key[1] == "a") for key, value in human.items()}
    del human[("i2", "c")]  # c has no rating on i2: the common items are i0 and i1
    tasks = dict.fromkeys(["i0", "i1", "i2"], "open")
    cells, n_items, _ = correlate_scores(judge, human, tasks, PCT)
    assert n_items[("system", "open")] == 2 and n_items[("sample", "open")] == 3
    common_j = [np.mean([judge[(i, m)] for i in ("i0", "i1")]) for m in "abc"]
    common_h = [np.mean([human[(i, m)] for i in ("i0", "i1")]) for m in "abc"]
    assert cells[("system", "open", "pearson")].value == pytest.approx(stats.pearsonr(common_j, common_h)[0])
    # the earlier behaviour, each model over its own rated items, stays available as an option
    available = CorrelationSettings(n_boot=200, seed=7, interval="percentile", items="available")
    old, old_n, _ = correlate_scores(judge, human, tasks, available)
    own_j = [np.mean([judge[k] for k in human if k[1] == m]) for m in "abc"]
    own_h = [np.mean([human[k] for k in human if k[1] == m]) for m in "abc"]
    assert old[("system", "open", "pearson")].value == pytest.approx(stats.pearsonr(own_j, own_h)[0])
    assert old_n[("system", "open")] == 3
    assert old[("system", "open", "pearson")].value != pytest.approx(cells[("system", "open", "pearson")].value)


def _random_ratings(n_items: int, n_models: int, seed: int, noise: float = 1.5,
                    spread: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Half-point human means (two raters on 1-5) and integer judge scores (1-10) that follow them with noise."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(3 - spread, 3 + spread, n_models)
    human = np.clip(np.round(2 * (quality + rng.normal(0, 1.0, (n_items, n_models)))) / 2, 1, 5)
    judge = np.clip(np.round(2 * human + rng.normal(0, noise, human.shape)), 1, 10)
    return judge, human


def _keyed(judge: np.ndarray, human: np.ndarray) -> tuple[dict[tuple[str, str], float], ...]:
    n, k = judge.shape
    keys = [(f"i{i:02d}", f"m{m}") for i in range(n) for m in range(k)]
    return {key: judge[i // k, i % k] for i, key in enumerate(keys)}, {key: human[i // k, i % k] for i, key in
                                                                      enumerate(keys)}


@pytest.mark.parametrize("metric", ["pearson", "kendall", "spearman"])
def test_bca_intervals_match_scipy_bootstrap(metric: str) -> None:
    judge, human = _random_ratings(16, 6, seed=11)
    n, n_boot, seed = judge.shape[0], 200, 5
    settings = CorrelationSettings(n_boot=n_boot, seed=seed)
    cells, _, _ = correlate_scores(*_keyed(judge, human), {f"i{i:02d}": "open" for i in range(n)}, settings)
    scipy_fn = {"pearson": stats.pearsonr, "kendall": stats.kendalltau, "spearman": stats.spearmanr}[metric]
    per_item = np.array([scipy_fn(judge[r], human[r])[0] for r in range(n)])

    def system(idx: np.ndarray) -> float:  # means of half-points over the same n: equal means are equal floats
        return float(scipy_fn(judge[idx].mean(axis=0), human[idx].mean(axis=0))[0])

    def sample(idx: np.ndarray) -> float:
        return float(np.nanmean(per_item[idx]))

    for level, statistic in (("system", system), ("sample", sample)):
        expected = stats.bootstrap((np.arange(n),), statistic, n_resamples=n_boot, method="BCa", vectorized=False,
                                   rng=np.random.default_rng(seed)).confidence_interval
        est = cells[(level, "open", metric)]
        assert est.value == pytest.approx(statistic(np.arange(n)), abs=1e-9)
        assert (est.low, est.high) == pytest.approx((expected.low, expected.high), abs=1e-9), level


def test_bca_corrects_the_low_bias_of_percentile_intervals_at_system_level() -> None:
    """Resampling items adds noise to model means and pulls r down: the percentile interval misses r itself."""
    judge, human = _random_ratings(30, 9, seed=0, noise=2.0, spread=0.8)
    tasks = {f"i{i:02d}": "open" for i in range(30)}
    pct, _, _ = correlate_scores(*_keyed(judge, human), tasks, CorrelationSettings(interval="percentile"))
    bca, _, _ = correlate_scores(*_keyed(judge, human), tasks, CorrelationSettings())
    p, b = pct[("system", "all", "pearson")], bca[("system", "all", "pearson")]
    assert p.value == b.value and p.high < p.value
    assert b.low > p.low and b.high > p.high  # BCa moves the interval up by the bias the bootstrap shows


# ------------------------------------------------------------------ empty writings (issue 14 point 8)
JUDGE = {"a": [6.0, 7.0, 5.0], "b": [5.0, 6.0, 6.0], "c": [8.0, 7.0, 9.0], "d": [1.0, 4.0, 5.0]}
RATED = {"a": [3.0, 4.0, 3.0], "b": [3.0, 3.0, 4.0], "c": [5.0, 4.0, 5.0], "d": [1.0, 2.0, 3.0]}


def _with_an_empty_writing() -> tuple[list, dict[tuple[str, str], float]]:
    """Model d wrote nothing for i1: ToW recorded its lowest score (1.0) with status "empty". One node, one leaf,
    so `meta ablation`'s full tree is the same score."""
    js = [judgment(f"i{k + 1}", m, v, status="empty" if (m, k) == ("d", 0) else "ok", nodes={"content": v},
                   leaves=[LeafResult(name="logic", node="content", score=v)])
          for m, vs in JUDGE.items() for k, v in enumerate(vs)]
    human = {(f"i{k + 1}", m): v for m, vs in RATED.items() for k, v in enumerate(vs)}
    return js, human


def _expected(kept: list[int], keep_empty: bool) -> tuple[float, float]:
    """System r over the items every model has (hand means) and the mean of the per-item r, by scipy."""
    models = [m for m in JUDGE]

    def has(m: str, k: int) -> bool:
        return keep_empty or (m, k) != ("d", 0)

    items = [k for k in kept if all(has(m, k) for m in models)]
    judge_means = [float(np.mean([JUDGE[m][k] for k in items])) for m in models]
    human_means = [float(np.mean([RATED[m][k] for k in items])) for m in models]
    system = stats.pearsonr(judge_means, human_means)[0]
    per_item = [stats.pearsonr([JUDGE[m][k] for m in models if has(m, k)],
                               [RATED[m][k] for m in models if has(m, k)])[0] for k in kept]
    return float(system), float(np.mean(per_item))


@pytest.mark.parametrize("empty", ["exclude", "lowest"])
def test_an_empty_writing_is_left_out_by_default_and_counted(empty: str) -> None:
    js, human = _with_an_empty_writing()
    settings = CorrelationSettings(n_boot=50, seed=7, empty=empty)  # type: ignore[arg-type]
    (row,) = correlate_method("ToW", js, human, settings)
    system, sample = _expected([0, 1, 2], keep_empty=empty == "lowest")
    assert row.cells[("system", "guide", "pearson")].value == pytest.approx(system)
    assert row.cells[("sample", "guide", "pearson")].value == pytest.approx(sample)
    # the empty writing takes i1 out of the items rated for every model (common policy) only when left out
    assert row.n_items[("system", "guide")] == (2 if empty == "exclude" else 3)
    assert row.n_empty == 1
    table = correlation_table([row], "system")
    treatment = {"exclude": "exclude: left out", "lowest": "lowest: scored lowest"}[empty]
    assert table.records()[0]["empty writings"] == 1 and table.records()[0]["empty"] == treatment
    assert any(n.startswith("1 empty rated writings " + ("left out" if empty == "exclude" else "included"))
               for n in table.notes)


def test_exclude_and_lowest_differ_as_computed_by_hand() -> None:
    """Guard the fixture: the two conventions give different numbers here, so the test above can tell them apart."""
    assert _expected([0, 1, 2], False)[0] != pytest.approx(_expected([0, 1, 2], True)[0])
    assert _expected([0, 1, 2], False)[1] != pytest.approx(_expected([0, 1, 2], True)[1])


def test_sampled_judges_follow_the_convention_in_every_row() -> None:
    """Self-consistency rows: an empty writing judged without a call (no samples) is left out of every sample's
    scores by default, and stands at its recorded lowest score for every sample with "lowest"."""
    from howtobench.meta.correlate import mean_sample_scores, sample_scores

    full = sampled("i1", "a", [6.0, 8.0])
    empty = judgment("i1", "b", 1.0, method="autoplan", status="empty")
    for k in (0, 1):
        assert sample_scores([full, empty], k) == {("i1", "a"): [6.0, 8.0][k]}
        assert sample_scores([full, empty], k, "lowest") == {("i1", "a"): [6.0, 8.0][k], ("i1", "b"): 1.0}
    assert mean_sample_scores([full, empty]) == {("i1", "a"): 7.0}
    assert mean_sample_scores([full, empty], "lowest") == {("i1", "a"): 7.0, ("i1", "b"): 1.0}
