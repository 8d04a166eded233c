"""The names of calibrated metrics and their table titles (no numerics: imported by every rendering path)."""

from __future__ import annotations

CALIBRATED = "calibrated"
ROOT_METRIC = "score"


def calibrated_metric(metric: str) -> str:
    """`calibrated` for the root score, `calibrated:NODE` for a node."""
    return CALIBRATED if metric == ROOT_METRIC else f"{CALIBRATED}:{metric}"


def calibrated_title(metric: str, label: str | None) -> str | None:
    """The table title of a calibrated metric (None for any other metric)."""
    label = label or "calibrated"
    if metric == CALIBRATED:
        return f"root score, {label}"
    if metric.startswith(CALIBRATED + ":"):
        return f"node: {metric.split(':', 1)[1]}, {label}"
    return None
