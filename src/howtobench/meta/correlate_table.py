"""Table 3 / Table 5 layout of correlation rows, naming what was computed.

One table per level. Besides the ρ / τ / σ cells (with their interval inline, as numeric low / high columns,
or not at all) every row carries the items each task used, the interval method and the item policy, so a
CSV or JSON copy of the table still says how its numbers were made.
"""

from __future__ import annotations

import numpy as np

from howtobench.meta.correlate import ITEM_POLICIES, TASK_LABELS, TASKS, CorrelationRow, CorrelationSettings
from howtobench.meta.stats import METRICS, SYMBOLS, Estimate
from howtobench.report.tables import Table


def _cell_columns(ci: str) -> list[tuple[str, str, str | None]]:
    parts: list[str | None] = [None, "low", "high"] if ci == "columns" else [None]
    return [(t, m, p) for t in TASKS for m in METRICS for p in parts]


def _items_used(level: str, settings: CorrelationSettings) -> str:
    if level == "system":
        return f"{settings.items}: {ITEM_POLICIES[settings.items]}"
    return "per item: the models rated on it"


def correlation_table(rows: list[CorrelationRow], level: str, ci: str = "inline", title: str | None = None) -> Table:
    """Table 3 layout for one level; `ci` is 'inline' ('0.93 [0.85, 0.97]'), 'columns' (numeric lo/hi) or 'none'.

    The last columns say what was computed: the items each task used, the interval method, the item policy."""
    settings = rows[0].settings if rows else CorrelationSettings()
    cols = _cell_columns(ci)
    header = ["Method", "Cost ($)"] + [
        f"{TASK_LABELS[t]} {SYMBOLS[m]}" + ("" if part is None else f" {part}") for t, m, part in cols
    ]
    header += [f"{TASK_LABELS[t]} items" for t in TASKS] + ["interval", "items used"]
    ci_label = "none" if ci == "none" else f"{settings.interval_label} bootstrap over items, {settings.n_boot}×"
    used = _items_used(level, settings)
    what = f"{level} level; {used}" + ("" if ci == "none" else f"; {settings.interval_label} intervals")
    table = Table(title=f"{title or 'Correlation with human ratings'} ({what})", columns=header)
    for row in rows:
        cells: list[object] = [row.method, row.cost_usd]
        for task, metric, part in cols:
            est = row.cells.get((level, task, metric))
            cells.append(_cell(est, part, ci))
        cells += [row.n_items.get((level, t), 0) for t in TASKS] + [ci_label, used]
        table.add_row(*cells)
    if ci != "none":
        table.notes.append(f"{ci_label} (seed {settings.seed}); [n/a]: the interval is undefined there")
    if level == "system":
        if settings.items == "common" and rows:
            kept = ", ".join(f"{TASK_LABELS[t]} {rows[0].n_items.get(('system', t), 0)} of "
                             f"{rows[0].n_items.get(('sample', t), 0)}" for t in TASKS)
            table.notes.append(f"items rated for every model, of all rated items ({rows[0].method}): {kept}")
        table.notes.append(f"model means rounded to {settings.tie_decimals} decimals before ranking, so equal "
                           "means are ties")
    return table


def _cell(est: Estimate | None, part: str | None, ci: str) -> object:
    if est is None:
        return None
    if part is not None:
        return est.low if part == "low" else est.high
    if ci == "inline" and np.isfinite(est.value):
        if not (np.isfinite(est.low) and np.isfinite(est.high)):
            return f"{est.value:.2f} [n/a]"
        return f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"
    return est.value
