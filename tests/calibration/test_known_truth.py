"""A judge whose every leaf reads two steps higher (clipped at 10) is mapped back onto the reference judge.

Crafted judgments (tests/calibration/calibration_crafted.py): the anchors are chosen from one set of writings, the
map is used on held-out writings, and the calibrated All of every model must land within 0.15 of the reference
judge's All of the same writings, inside its interval.
"""

from __future__ import annotations

import numpy as np
import pytest
from calibration_crafted import judgments, latent_writings

from howtobench.calibration.anchors import anchors_for_width, choose_anchors
from howtobench.calibration.apply import Mapper, mean_estimate
from howtobench.calibration.fit import fit_calibration
from howtobench.calibration.record import POOLED, ROOT
from howtobench.stats import rng_for


@pytest.fixture(scope="module")
def split() -> tuple[list, list]:
    writings = latent_writings(300, models=5, seed=11)
    return writings[:750], writings[750:]  # 150 items for anchors, 150 held out (items do not overlap)


@pytest.fixture(scope="module")
def calibration(split):  # type: ignore[no-untyped-def]
    anchor_pool, _ = split
    ref = judgments(anchor_pool, "judge-a")
    plan = choose_anchors(ref, n=300, seed=0)
    chosen = {(a.item_id, a.model) for a in plan.anchors}
    new = [j for j in judgments(anchor_pool, "judge-b", shift=2) if (j.item_id, j.model) in chosen]
    return fit_calibration(ref, new, n_boot=300, seed=0)


def test_two_steps_higher_is_mapped_back_on_held_out_writings(split, calibration) -> None:  # type: ignore[no-untyped-def]
    _, held_out = split
    ref, new = judgments(held_out, "judge-a"), judgments(held_out, "judge-b", shift=2)
    mapper = Mapper(calibration, n_boot=300)
    tasks = np.array([j.task for j in new])
    mapped = mapper.map(ROOT, tasks, np.array([j.score for j in new], dtype=float))
    truth = np.array([j.score for j in ref], dtype=float)
    raw = np.array([j.score for j in new], dtype=float)
    for model in sorted({j.model for j in new}):
        mask = np.array([j.model == model for j in new])
        est = mean_estimate(mapped, mask, rng_for(0, model))
        assert est is not None and est.ci_low is not None and est.ci_high is not None
        true_all = truth[mask].mean()
        assert raw[mask].mean() - true_all > 1.0  # the raw shift is large: the map has work to do
        assert abs(est.mean - true_all) < 0.15, (model, est, true_all)
        assert est.ci_low <= true_all <= est.ci_high, (model, est, true_all)


def test_per_task_and_node_maps_are_fitted(calibration) -> None:  # type: ignore[no-untyped-def]
    scopes = {(m.node, m.scope) for m in calibration.maps}
    assert {(ROOT, POOLED), (ROOT, "completion"), (ROOT, "guide"), (ROOT, "open")} <= scopes
    assert ("format", "completion") not in scopes  # Completion has no Format node
    assert {"content", "format", "impression"} <= {n for n, _ in scopes}
    root = calibration.map_for(ROOT, POOLED)
    assert root is not None and np.all(np.diff(root.knots_y) >= 0)
    assert 0 < root.band_width < 1.0


def test_drift_report_sees_the_shift(calibration) -> None:  # type: ignore[no-untyped-def]
    drift = calibration.drift
    assert drift["n_anchors"] == 300
    assert drift["spearman"] > 0.9 and drift["kendall"] == pytest.approx(1.0)
    shift = drift["shift_all"]
    assert 1.0 < shift["shift"] < 3.0 and shift["ci"][0] < shift["shift"] < shift["ci"][1]
    assert set(drift["shift_by_task"]) == {"completion", "guide", "open"}
    assert drift["rank_changes"] == []  # a monotone shift changes no model's order


def test_stratified_anchors_cover_every_stratum_and_the_score_range(split) -> None:  # type: ignore[no-untyped-def]
    ref = judgments(split[0], "judge-a")
    plan = choose_anchors(ref, n=300, seed=0)
    assert len(plan.anchors) == 300
    assert all(chosen >= 1 for chosen, _ in plan.strata.values())
    assert len(plan.strata) == 3 * 4 * 5
    scores = np.array([j.score for j in ref])
    picked = np.array([a.score for a in plan.anchors])
    assert picked.min() - scores.min() < 0.5 and scores.max() - picked.max() < 0.5
    sized = choose_anchors(ref, width=0.3, seed=0)
    assert len(sized.anchors) == anchors_for_width(sized.sd, 0.3)


@pytest.mark.parametrize(("field", "value", "words"), [
    ("judge_model", "judge-c", "judge 'judge-c', the calibration's is 'judge-b'"),
    ("tree_hash", "tree-2", "tree 'tree-2', the calibration's is 'tree-1'"),
    ("prompt_hash", "prompts-2", "prompts 'prompts-2', the calibration's is 'prompts-1'"),
    ("method", "rubric", "method 'rubric', the calibration's is 'tow'"),
])
def test_judgments_the_calibration_was_not_fitted_for_are_refused(
        split, calibration, field: str, value: str, words: str) -> None:  # type: ignore[no-untyped-def]
    from howtobench.calibration.record import check_matches
    from howtobench.errors import ConfigError

    other = [j.model_copy(update={field: value}) for j in judgments(split[1][:20], "judge-b", shift=2)]
    with pytest.raises(ConfigError, match=f"^--calibration cal.json does not fit these judgments: {words}$"):
        check_matches(calibration, other, "cal.json")
    check_matches(calibration, judgments(split[1][:20], "judge-b", shift=2), "cal.json")  # the right ones pass
