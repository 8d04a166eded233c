"""The figures of docs/calibration.md: what a number of anchors buys, whether the intervals cover, the paper step's
refusal threshold and its error rates, and what fitting and applying a calibration costs.

    python bench/calibration.py [--repeat 10] [--bootstrap 500] [--anchors 50,100,200,400,800]

Crafted judges (tests/calibration/calibration_crafted.py): judge B answers every leaf two steps higher than judge A,
clipped at the scale's top. For each anchor count, anchors are drawn (stratified, `choose_anchors`) from one set of
writings and the map is applied to held-out writings of other items; per model it prints the error of the
calibrated All against A's All of the same writings, the width of the interval the leaderboard prints (items and
anchors resampled) and of its calibration part alone (anchors only), and how often the interval covers A's All.
The paper step: the smallest Kendall τ that passes at 10 models, how often a judge whose model order is random
passes (the test's false acceptance), and leave-one-model-out placement of crafted judges that agree with the
paper at two noise levels.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "calibration"))

from calibration_crafted import judgments, latent_writings  # noqa: E402

from howtobench.calibration.anchors import anchors_for_width, choose_anchors  # noqa: E402
from howtobench.calibration.apply import Mapper, mean_estimate  # noqa: E402
from howtobench.calibration.fit import fit_calibration  # noqa: E402
from howtobench.calibration.paper import cell_means, fit_to_paper, place  # noqa: E402
from howtobench.calibration.record import ROOT  # noqa: E402
from howtobench.data.paper import ALL_ROW, paper_table4  # noqa: E402
from howtobench.judges.base import Judgment  # noqa: E402
from howtobench.stats import percentile_ci, rng_for  # noqa: E402


def anchors_table(counts: list[int], repeat: int, n_boot: int) -> None:
    pool = latent_writings(400, models=5, seed=100)
    pool_a, pool_b = judgments(pool, "A"), {(j.item_id, j.model): j for j in judgments(pool, "B", shift=2)}
    held = latent_writings(300, models=5, seed=200)
    held_a, held_b = judgments(held, "A"), judgments(held, "B", shift=2)
    truth = np.array([j.score for j in held_a], dtype=float)
    scores = np.array([j.score for j in held_b], dtype=float)
    tasks = np.array([j.task for j in held_b])
    models = sorted({j.model for j in held_b})
    sd = float(np.std([j.score for j in pool_a], ddof=1))
    print(f"anchors -> interval (held-out writings: {len(held_b)}, {len(models)} models of ~{len(held_b) // 5} "
          f"writings; reference sd {sd:.3f}; {repeat} anchor draws × {len(models)} models per row)")
    print("| anchors | width for (2·1.96·sd/W)² = n | mean abs error of a model's All | max abs error | "
          "interval width (items + anchors) | calibration part (anchors only) | coverage |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in counts:
        errors, widths, cal_widths, covered = [], [], [], []
        for r in range(repeat):
            plan = choose_anchors(pool_a, n=n, seed=r)
            new = [pool_b[(a.item_id, a.model)] for a in plan.anchors]
            cal = fit_calibration(list(plan.anchors), new, n_boot=n_boot, seed=r)
            mapped = Mapper(cal, n_boot=n_boot).map(ROOT, tasks, scores)
            for m in models:
                mask = np.array([j.model == m for j in held_b])
                est = mean_estimate(mapped, mask, rng_for(r, m))
                assert est is not None and est.ci_low is not None and est.ci_high is not None
                true_all = float(truth[mask].mean())
                errors.append(abs(est.mean - true_all))
                widths.append(est.ci_high - est.ci_low)
                low, high = percentile_ci(mapped.reps[:, mask].mean(axis=1))
                cal_widths.append(high - low)
                covered.append(est.ci_low <= true_all <= est.ci_high)
        implied = 2 * 1.959964 * sd / np.sqrt(n)
        print(f"| {n} | {implied:.3f} | {statistics.fmean(errors):.3f} | {max(errors):.3f} | "
              f"{statistics.fmean(widths):.3f} | {statistics.fmean(cal_widths):.3f} | "
              f"{statistics.fmean(covered):.0%} |")
    print(f"(--width 0.2 asks for {anchors_for_width(sd, 0.2)} anchors at this sd)")


def crafted_paper(centre: object, noise: float, seed: int, per_task: dict[str, int]) -> list[Judgment]:
    rng = np.random.default_rng(seed)
    out = []
    for task, n in per_task.items():
        for k in range(n):
            for m, model in enumerate(paper_table4().models):
                score = float(np.clip(centre(task, model, m) + rng.normal(0, noise), 1, 10))  # type: ignore[operator]
                out.append(Judgment(method="tow", item_id=f"{task}-{k}", model=model, task=task, genre="prose",
                                    score=score, judge_model="J", tree_hash="t", prompt_hash="p"))
    return out


def paper_table(repeat: int) -> None:
    from scipy import stats

    paper = paper_table4()
    n = len(paper.models)
    pairs = n * (n - 1) // 2
    passing = [d for d in range(pairs + 1)
               if stats.kendalltau(np.arange(n), _swapped(n, d), alternative="greater").pvalue < 0.05]
    d = max(passing)
    print(f"\npaper step: with {n} models the smallest Kendall τ with one-sided p < 0.05 is "
          f"{(pairs - 2 * d) / pairs:.3f} ({pairs - d} of {pairs} pairs in the paper's order)")
    rng = np.random.default_rng(0)
    ys = np.array([paper.get(ALL_ROW, m) or 0.0 for m in paper.models])
    accepted = sum(stats.kendalltau(rng.permutation(n), ys, alternative="greater").pvalue < 0.05
                   for _ in range(2000))
    print(f"a judge whose model order is random passes {accepted / 2000:.1%} of the time (2000 random orders)")
    per_task = {"completion": 38, "guide": 46, "open": 47}
    for noise in (0.8, 2.0):
        covered, widths, errors = [], [], []
        for r in range(repeat):
            def agree(task: str, model: str, m: int) -> float:
                return 1.4 * (paper.get(task, model) or 0.0) - 2.5

            judged = crafted_paper(agree, noise, r, per_task)
            for model in paper.models:
                cal = fit_to_paper([j for j in judged if j.model != model], paper)
                line = cal.line_for(ALL_ROW)
                if line is None:
                    continue
                mean, se, _ = cell_means([j for j in judged if j.model == model])[(ALL_ROW, model)]
                placed = place(line, mean, se)
                published = paper.get(ALL_ROW, model) or 0.0
                covered.append(placed.low <= published <= placed.high)
                widths.append(placed.high - placed.low)
                errors.append(abs(placed.value - published))
        print(f"agreeing judge, writing noise sd {noise} ({sum(per_task.values())} items per model): held-out paper "
              f"model's All placed with mean abs error {statistics.fmean(errors):.3f}, interval width "
              f"{statistics.fmean(widths):.3f}, coverage {statistics.fmean(covered):.0%} ({len(covered)} placements)")


def _swapped(n: int, swaps: int) -> np.ndarray:
    """0..n-1 after `swaps` adjacent swaps that each put one more pair out of order (bubble sort run backwards)."""
    order = list(range(n))
    done = 0
    for i in range(n):
        for j in range(n - 1 - i):
            if done >= swaps:
                return np.array(order)
            if order[j] < order[j + 1]:
                order[j], order[j + 1] = order[j + 1], order[j]
                done += 1
    return np.array(order)


def timing(n_boot: int) -> None:
    pool = latent_writings(434, models=10, seed=7)
    ref, new = judgments(pool, "A"), judgments(pool, "B", shift=2)
    plan = choose_anchors(ref, n=400, seed=0)
    chosen = {(a.item_id, a.model) for a in plan.anchors}
    start = time.perf_counter()
    cal = fit_calibration(list(plan.anchors), [j for j in new if (j.item_id, j.model) in chosen], n_boot=n_boot)
    fit_s = time.perf_counter() - start
    scores = np.array([j.score for j in new], dtype=float)
    tasks = np.array([j.task for j in new])
    start = time.perf_counter()
    mapped = Mapper(cal, n_boot=n_boot).map(ROOT, tasks, scores)
    for m in sorted({j.model for j in new}):
        mean_estimate(mapped, np.array([j.model == m for j in new]), rng_for(0, m))
    apply_s = time.perf_counter() - start
    print(f"\ncost: fitting 400 anchors (every node and task, {n_boot} bootstrap maps each) {fit_s:.2f} s; mapping "
          f"{len(new)} root scores through {n_boot} maps and 10 models' All intervals {apply_s:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--anchors", default="50,100,200,400,800")
    args = ap.parse_args()
    anchors_table([int(x) for x in args.anchors.split(",")], args.repeat, args.bootstrap)
    paper_table(args.repeat)
    timing(args.bootstrap)


if __name__ == "__main__":
    main()
