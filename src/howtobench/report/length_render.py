"""How the length fits print: the coefficient table every leaderboard view shows, and its JSON form."""

from __future__ import annotations

from typing import Any

from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED, SUPPORT_SHARE, FitSummary, LengthControl
from howtobench.report.length_per_model import ModelSlope

TASK_LABELS = {"completion": "Completion", "guide": "Guide", "open": "Open"}


def controlled_title(metric: str) -> str | None:
    """The table title of a controlled metric; None for any other metric."""
    if metric == LENGTH_CONTROLLED:
        return "root score, length-controlled (predicted at the reference's length)"
    if metric.startswith(LENGTH_CONTROLLED + ":"):
        return f"node: {metric.split(':', 1)[1]}, length-controlled"
    if metric == ITEM_ADJUSTED:
        return "root score, item-adjusted (every model on the same items; no length term)"
    if metric.startswith(ITEM_ADJUSTED + ":"):
        return f"node: {metric.split(':', 1)[1]}, item-adjusted"
    return None


def support_line(lc: LengthControl) -> str | None:
    """The † note under the tables, when any controlled cell extrapolates."""
    if not any(c.out_of_support for c in lc.cells.values()):
        return None
    return (f"† more than {SUPPORT_SHARE:.0%} of the model's writings lie outside the lengths the other models wrote "
            "(central 95%): its length correction is clipped there, the value extrapolates and is not ranked.")


def _g(x: float) -> str:
    return f"{x:.3f}"


def fits_grid(lc: LengthControl) -> tuple[list[str], list[list[str]]]:
    """One line per (metric, task) fit: β with its bootstrap interval, the fit's quality and its size."""
    header = ["metric", "task", "β (per unit ln length ratio) [95% CI]", "β above the reference [95% CI]",
              "slope used", "support (ln ratio, central 95%)", "R²", "within-item R²", "length partial R²", "RMSE",
              "writings", "items", "models"]
    body = []
    for f in lc.fits:
        q = f.quality
        above = "-" if f.beta_above is None else _beta(f.beta_above, f.beta_above_ci)
        support = f"[{f.support[0]:+.2f}, {f.support[1]:+.2f}]"
        body.append([f.metric, TASK_LABELS.get(f.task, f.task), _beta(f.beta, f.beta_ci), above, _used(f), support,
                     _g(q.r2),
                     _g(q.r2_within), _g(q.partial_r2_length), _g(q.rmse), str(q.n_obs), str(q.n_items),
                     str(f.n_models)])
    return header, body


def support_grid(lc: LengthControl) -> tuple[list[str], list[list[str]]]:
    """Each model's root-score writings against each task fit's support: the share lying outside the lengths the
    other models wrote (more than SUPPORT_SHARE: the model's controlled value extrapolates, †)."""
    fits = [f for f in lc.fits if f.metric == "score"]
    header = ["model", *(f"{TASK_LABELS.get(f.task, f.task)} outside {f.support[0]:+.2f}..{f.support[1]:+.2f}"
                         for f in fits)]
    models = list(dict.fromkeys(m for f in fits for m in f.outside))
    body = [[m, *(f"{f.outside[m]:.0%}" + (" †" if f.outside[m] > SUPPORT_SHARE else "") if m in f.outside else "-"
                  for f in fits)] for m in models]
    return header, body


def slopes_line(lc: LengthControl) -> str:
    """Which slope mode the controlled values used (--length-slopes), said under every format's tables."""
    if lc.slopes == "per-model":
        return ("Length slopes: per-model — each model's root-score slope shrunk toward the pooled one (empirical "
                "Bayes; the bend at the reference shared; nodes pooled), table below.")
    return ("Length slopes: pooled — one slope pair per task, shared by its models (--length-slopes per-model: one "
            "each).")


def slopes_grid(lc: LengthControl) -> tuple[list[str], list[list[str]]] | None:
    """One line per (task, model) of the per-model slopes (root score): the model's own slope below the reference
    with its standard error, the shrinkage weight, the slopes used below (with its bootstrap interval) and above;
    None when the slopes are pooled."""
    fits = [f for f in lc.fits if f.per_model]
    if not fits:
        return None
    header = ["task", "model", "own slope below ± SE", "weight on own", "slope used below [95% CI]",
              "slope used above", "pooled below", "τ²"]
    body = []
    for f in fits:
        for model, s in f.per_model.items():
            own = "-" if s.own != s.own else f"{s.own:+.3f} ± {s.own_se:.3f}"
            body.append([TASK_LABELS.get(f.task, f.task), model, own, f"{s.weight:.2f}", _beta(s.below, s.below_ci),
                         "-" if s.above is None else f"{s.above:+.3f}", f"{f.beta:+.3f}",
                         f"{f.tau2:.4f}" if f.tau2 is not None else "-"])
    return header, body


def _used(f: FitSummary) -> str:
    """Which slope set the controlled values: the judge's, measured on pad/trim pairs, or the association."""
    a = f.anchor
    per_model = " + each model's shrunk deviation (per-model slopes table)" if f.per_model else ""
    if a is None:
        return "this fit (an association, not the judge's measured bias)" + per_model
    text = f"measured on {a.n} pad/trim pairs: {_beta(a.beta, a.beta_ci)}"
    text += "" if a.beta_above is None else f", above {_beta(a.beta_above, a.beta_above_ci)}"
    text += " — DISAGREES with this fit" if f.disagrees else ""
    return text + per_model


def _beta(value: float, ci: tuple[float, float] | None) -> str:
    return f"{value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def _fit_json(f: FitSummary) -> dict[str, Any]:
    q = f.quality
    return {
        "metric": f.metric,
        "task": f.task,
        "beta": round(f.beta, 6),
        "beta_ci": [round(v, 6) for v in f.beta_ci] if f.beta_ci else None,
        "beta_above": None if f.beta_above is None else round(f.beta_above, 6),
        "beta_above_ci": [round(v, 6) for v in f.beta_above_ci] if f.beta_above_ci else None,
        "support": [round(v, 6) for v in f.support],
        "score_range": [round(v, 6) for v in f.score_range],
        "outside_support": {c: round(float(v), 4) for c, v in f.outside.items()},
        "slope_used": "association" if f.anchor is None else "anchor",
        "slopes": "per-model" if f.per_model else "pooled",
        "per_model": {m: _slope_json(s) for m, s in f.per_model.items()} or None,
        "tau2": None if f.tau2 is None else round(f.tau2, 6),
        "anchor": None if f.anchor is None else {
            "pairs": f.anchor.n, "beta": round(f.anchor.beta, 6),
            "beta_ci": [round(v, 6) for v in f.anchor.beta_ci] if f.anchor.beta_ci else None,
            "beta_above": None if f.anchor.beta_above is None else round(f.anchor.beta_above, 6),
            "beta_above_ci": [round(v, 6) for v in f.anchor.beta_above_ci] if f.anchor.beta_above_ci else None,
            "disagrees": f.disagrees},
        "r2": round(q.r2, 6),
        "r2_within": round(q.r2_within, 6),
        "partial_r2_length": round(q.partial_r2_length, 6),
        "rmse": round(q.rmse, 6),
        "n_obs": q.n_obs,
        "n_items": q.n_items,
        "n_models": f.n_models,
    }


def _slope_json(s: ModelSlope) -> dict[str, Any]:
    def r(v: float) -> float | None:
        return None if v != v else round(v, 6)

    return {"own": r(s.own), "own_se": r(s.own_se), "weight": r(s.weight), "below": r(s.below),
            "below_ci": [round(v, 6) for v in s.below_ci] if s.below_ci else None,
            "above": None if s.above is None else r(s.above)}


def fits_json(lc: LengthControl) -> dict[str, Any]:
    return {
        "slopes": lc.slopes,
        "model": "score = alpha_model + delta_item + beta_below * min(x, 0) + beta_above * max(x, 0), x = "
                 "ln(writing_chars / reference_chars), least squares, one fit per task (one slope when either side "
                 "of the reference has fewer than 10 writings); controlled = alpha_model + mean(delta_item) with each "
                 "model's x clipped to the central 95% of the other models' x (and 0), then to the observed score "
                 "range; item_adjusted = the same fit without the length term; All = item-weighted mean of the task "
                 "values; 95% percentile intervals from resampling items",
        "fits": [_fit_json(f) for f in lc.fits],
        "excluded": lc.excluded,
    }
