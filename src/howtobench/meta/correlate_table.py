"""Table 3 / Table 5 layout of correlation rows, naming what was computed.

One table per level. Besides the ρ / τ / σ cells (with their interval inline, as numeric low / high columns,
or not at all) every row carries the items each task used, the interval method, the item policy and the empty
writings among the rated ones with what was done with them, so a CSV or JSON copy of the table still says how
its numbers were made.
"""

from __future__ import annotations

import numpy as np

from howtobench.document import Table
from howtobench.judges.base import EMPTY_TREATMENT
from howtobench.meta.correlate import ITEM_POLICIES, TASK_LABELS, TASKS, CorrelationRow, CorrelationSettings
from howtobench.stats import METRICS, SYMBOLS, Estimate


def _cell_columns(ci: str) -> list[tuple[str, str, str | None]]:
    parts: list[str | None] = [None, "low", "high"] if ci == "columns" else [None]
    return [(t, m, p) for t in TASKS for m in METRICS for p in parts]


def _items_used(level: str, settings: CorrelationSettings) -> str:
    if level == "system":
        return f"{settings.items}: {ITEM_POLICIES[settings.items]}"
    return "per item: the models rated on it"


def empty_note(count: int | str, empty: str, what: str = "rated writings") -> str:
    """The sentence every meta output prints about empty writings (also when there are none); `count` may be a
    text such as "per row: A 2, B 0"."""
    subject = f"{count} empty {what}" if isinstance(count, int) else f"empty {what} ({count})"
    if empty == "exclude":
        return (f"{subject} left out (--empty exclude, the authors' convention: their pipeline writes no judgment "
                "for an empty writing; --empty lowest scores them)")
    return f"{subject} included with the judge's lowest scores (--empty lowest)"


def correlation_table(rows: list[CorrelationRow], level: str, ci: str = "inline", title: str | None = None) -> Table:
    """Table 3 layout for one level; `ci` is 'inline' ('0.93 [0.85, 0.97]'), 'columns' (numeric lo/hi) or 'none'.

    The last columns say what was computed: the items each task used, the interval method, the item policy, the
    empty writings among the rated ones and what was done with them."""
    settings = rows[0].settings if rows else CorrelationSettings()
    cols = _cell_columns(ci)
    header = ["Method", "Cost ($)"] + [
        f"{TASK_LABELS[t]} {SYMBOLS[m]}" + ("" if part is None else f" {part}") for t, m, part in cols
    ]
    header += [f"{TASK_LABELS[t]} items" for t in TASKS] + ["interval", "items used", "empty writings", "empty"]
    ci_label = "none" if ci == "none" else f"{settings.interval_label} bootstrap over items, {settings.n_boot}×"
    used = _items_used(level, settings)
    what = f"{level} level; {used}" + ("" if ci == "none" else f"; {settings.interval_label} intervals")
    table = Table(title=f"{title or 'Correlation with human ratings'} ({what})", columns=header)
    for row in rows:
        cells: list[object] = [row.method, row.cost_usd]
        for task, metric, part in cols:
            est = row.cells.get((level, task, metric))
            cells.append(_cell(est, part, ci))
        cells += [row.items_used(level, t) for t in TASKS] + [ci_label, used, row.n_empty]
        table.add_row(*cells, f"{settings.empty}: {EMPTY_TREATMENT[settings.empty]}")
    if ci != "none":
        table.notes.append(f"{ci_label} (seed {settings.seed}); [n/a]: the interval is undefined there")
    table.notes.append(_empty_rows_note(rows, settings.empty))
    if level == "system":
        if settings.items == "common" and rows:
            kept = ", ".join(f"{TASK_LABELS[t]} {rows[0].items_used('system', t)} of "
                             f"{rows[0].items_used('sample', t)}" for t in TASKS)
            table.notes.append(f"items rated for every model, of all rated items ({rows[0].method}): {kept}")
        table.notes.append(f"model means rounded to {settings.tie_decimals} decimals before ranking, so equal "
                           "means are ties")
    return table


def _empty_rows_note(rows: list[CorrelationRow], empty: str) -> str:
    counts = {row.n_empty for row in rows}
    if len(counts) <= 1:
        return empty_note(counts.pop() if counts else 0, empty)
    return empty_note("per row: " + ", ".join(f"{r.method} {r.n_empty}" for r in rows), empty)


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
