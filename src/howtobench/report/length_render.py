"""How the length fits print: the coefficient table every leaderboard view shows, and its JSON form."""

from __future__ import annotations

from typing import Any

from howtobench.report.length_control import ITEM_ADJUSTED, LENGTH_CONTROLLED, SUPPORT_SHARE, FitSummary, LengthControl

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


def _used(f: FitSummary) -> str:
    """Which slope set the controlled values: the judge's, measured on pad/trim pairs, or the association."""
    a = f.anchor
    if a is None:
        return "this fit (an association, not the judge's measured bias)"
    text = f"measured on {a.n} pad/trim pairs: {_beta(a.beta, a.beta_ci)}"
    text += "" if a.beta_above is None else f", above {_beta(a.beta_above, a.beta_above_ci)}"
    return text + (" — DISAGREES with this fit" if f.disagrees else "")


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


def fits_json(lc: LengthControl) -> dict[str, Any]:
    return {
        "model": "score = alpha_model + delta_item + beta_below * min(x, 0) + beta_above * max(x, 0), x = "
                 "ln(writing_chars / reference_chars), least squares, one fit per task (one slope when either side "
                 "of the reference has fewer than 10 writings); controlled = alpha_model + mean(delta_item) with each "
                 "model's x clipped to the central 95% of the other models' x (and 0), then to the observed score "
                 "range; item_adjusted = the same fit without the length term; All = item-weighted mean of the task "
                 "values; 95% percentile intervals from resampling items",
        "fits": [_fit_json(f) for f in lc.fits],
        "excluded": lc.excluded,
    }
