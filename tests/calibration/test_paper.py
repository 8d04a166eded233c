"""The paper as the reference judge: system-level lines, their refusal, and placing a held-out paper model.

Crafted judgments of the paper's ten models (tasks in the paper's item proportions): a judge built to agree with
GPT-4o (its writing scores centred on a linear function of the published cell) and one whose model order is
unrelated to the paper's. The line and its prediction interval are checked against statsmodels' OLS.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("statsmodels", reason="the [dev] extra installs statsmodels (the reference OLS)")

import statsmodels.api as sm
from scipy import stats

from howtobench.calibration.paper import cell_means, fit_line, fit_to_paper, place, refuse_unsupported
from howtobench.data.paper import ALL_ROW, paper_table4
from howtobench.errors import DataError
from howtobench.judges.base import Judgment

ITEMS = {"completion": 38, "guide": 46, "open": 47}  # the paper's 379 / 456 / 467, a tenth
UNRELATED = [6.0, 4.5, 5.5, 4.0, 6.5, 5.0, 5.8, 4.2, 5.2, 4.8]  # model means in the paper's model order


def crafted(judge: str, centre, seed: int = 0) -> list[Judgment]:  # type: ignore[no-untyped-def]
    """One judgment per (item, paper model): root = centre(task, model) + noise (sd 0.8)."""
    rng = np.random.default_rng(seed)
    out = []
    for task, n in ITEMS.items():
        for k in range(n):
            for m, model in enumerate(paper_table4().models):
                score = float(np.clip(centre(task, model, m) + rng.normal(0, 0.8), 1, 10))
                out.append(Judgment(method="tow", item_id=f"{task}-{k}", model=model, task=task, genre="prose",
                                    score=score, judge_model=judge, tree_hash="t", prompt_hash="p"))
    return out


def agreeing(task: str, model: str, m: int) -> float:
    return 1.4 * (paper_table4().get(task, model) or 0.0) - 2.5


def unrelated(task: str, model: str, m: int) -> float:
    return UNRELATED[m]


def test_line_and_prediction_interval_match_statsmodels() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(4, 7, 10)
    y = 0.8 * x + 1 + rng.normal(0, 0.1, 10)
    line = fit_line("guide", {f"m{k}": (float(a), float(b)) for k, (a, b) in enumerate(zip(x, y, strict=True))})
    ols = sm.OLS(y, sm.add_constant(x)).fit()
    assert line.intercept == pytest.approx(ols.params[0]) and line.slope == pytest.approx(ols.params[1])
    assert line.residual_sd == pytest.approx(np.sqrt(ols.scale))
    frame = ols.get_prediction(np.array([[1.0, 5.5]])).summary_frame(alpha=0.05)
    placed = place(line, 5.5)
    assert placed.value == pytest.approx(frame["mean"].iloc[0])
    assert (placed.low, placed.high) == pytest.approx((frame["obs_ci_lower"].iloc[0], frame["obs_ci_upper"].iloc[0]))
    tau = stats.kendalltau(x, y, alternative="greater")
    assert line.kendall_tau == pytest.approx(tau.statistic) and line.kendall_p == pytest.approx(tau.pvalue)


def test_an_unrelated_judge_is_refused_with_its_tau() -> None:
    cal = fit_to_paper(crafted("judge-x", unrelated), paper_table4())
    whole = next(ln for ln in cal.lines if ln.scope == ALL_ROW)
    assert whole.refused and whole.kendall_p >= 0.05
    with pytest.raises(DataError, match=rf"refused for all: Kendall τ .* is {whole.kendall_tau:.3f} \(one-sided p"):
        refuse_unsupported(cal)
    assert cal.line_for(ALL_ROW) is None  # a refused line is never applied


@pytest.mark.parametrize("held_out", list(range(10)))
def test_an_agreeing_judge_places_a_held_out_paper_model_within_its_interval(held_out: int) -> None:
    paper = paper_table4()
    model = paper.models[held_out]
    judged = crafted("judge-y", agreeing, seed=held_out)
    cal = fit_to_paper([j for j in judged if j.model != model], paper)
    refuse_unsupported(cal)
    line = cal.line_for(ALL_ROW)
    assert line is not None and line.n == 9 and line.kendall_p < 0.05
    mean, se, _ = cell_means([j for j in judged if j.model == model])[(ALL_ROW, model)]
    placed = place(line, mean, se)
    published = paper.get(ALL_ROW, model)
    assert published is not None and placed.low <= published <= placed.high, (model, placed, published)
    assert placed.high - placed.low < 0.6  # an interval that says something
