"""How the length fits print: the coefficient table every leaderboard view shows, and its JSON form."""

from __future__ import annotations

from typing import Any

from howtobench.report.length_control import LENGTH_CONTROLLED, FitSummary, LengthControl

TASK_LABELS = {"completion": "Completion", "guide": "Guide", "open": "Open"}


def controlled_title(metric: str) -> str | None:
    """The table title of a controlled metric; None for any other metric."""
    if metric == LENGTH_CONTROLLED:
        return "root score, length-controlled (predicted at the reference's length)"
    if metric.startswith(LENGTH_CONTROLLED + ":"):
        return f"node: {metric.split(':', 1)[1]}, length-controlled"
    return None


def _g(x: float) -> str:
    return f"{x:.3f}"


def fits_grid(lc: LengthControl) -> tuple[list[str], list[list[str]]]:
    """One line per (metric, task) fit: β with its bootstrap interval, the fit's quality and its size."""
    header = ["metric", "task", "β (per unit ln length ratio) [95% CI]", "R²", "within-item R²",
              "length partial R²", "RMSE", "writings", "items", "models"]
    body = []
    for f in lc.fits:
        beta, q = f"{f.beta:+.3f}" + (f" [{f.beta_ci[0]:+.3f}, {f.beta_ci[1]:+.3f}]" if f.beta_ci else ""), f.quality
        body.append([f.metric, TASK_LABELS.get(f.task, f.task), beta, _g(q.r2), _g(q.r2_within),
                     _g(q.partial_r2_length), _g(q.rmse), str(q.n_obs), str(q.n_items), str(f.n_models)])
    return header, body


def _fit_json(f: FitSummary) -> dict[str, Any]:
    q = f.quality
    return {
        "metric": f.metric,
        "task": f.task,
        "beta": round(f.beta, 6),
        "beta_ci": [round(v, 6) for v in f.beta_ci] if f.beta_ci else None,
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
        "model": "score = alpha_model + delta_item + beta * ln(writing_chars / reference_chars), least squares, "
                 "one fit per task; controlled = alpha_model + mean(delta_item) (prediction at ln ratio 0); All = "
                 "item-weighted mean of the task values; 95% percentile intervals from resampling items",
        "fits": [_fit_json(f) for f in lc.fits],
        "excluded": lc.excluded,
    }
