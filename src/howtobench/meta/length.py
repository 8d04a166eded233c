"""Length analysis (section 6.1, Table 6, Figure 5): does a longer input or output mean a better score?

Per task: Pearson correlations (with p-values) among input length (instruction + grounding
information, in characters), output length and, when judgments are given, the overall and content
scores; and a least-squares fit of output length on input length with every model's writings
pooled (the paper reports slopes of 1.4 for Guide and 6.1 for Open). By default every writing counts,
an empty one with output length 0, as the paper's fits did (the release gives 1.375 and 6.090, which
round to the paper's figures; without the 51 empty writings 1.394 and 6.171); `empty="exclude"` leaves
them out. Either way they are counted. Score columns follow the leaderboard's convention: an empty
writing has no score by default (the authors' pipeline skips it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from scipy import stats

from howtobench.data.models import TASKS, Item, Writing
from howtobench.document import Table
from howtobench.judges.base import EmptyConvention, Judgment, counted_score
from howtobench.meta.plots import new_figure, save_figure

PAPER_SLOPES: dict[str, float] = {"guide": 1.4, "open": 6.1}
TASK_NAMES: dict[str, str] = {"completion": "Completion", "guide": "Guide", "open": "Open"}
VAR_LABELS: dict[str, str] = {
    "input_length": "input length (chars)",
    "output_length": "output length (chars)",
    "overall": "overall score",
    "content": "content score",
}


EmptyLengths = Literal["include", "exclude"]
EMPTY_LENGTHS: tuple[str, ...] = ("include", "exclude")


@dataclass
class LengthData:
    """One row per writing analysed: its key, task and lengths, plus score columns by name (NaN = no score)."""

    keys: list[tuple[str, str]]
    task: np.ndarray
    model: np.ndarray
    input_length: np.ndarray
    output_length: np.ndarray
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    empty_skipped: int = 0
    empty_included: int = 0

    def variables(self, mask: np.ndarray) -> dict[str, np.ndarray]:
        """The analysed columns restricted to `mask`, lengths first."""
        out = {"input_length": self.input_length[mask], "output_length": self.output_length[mask]}
        return out | {name: col[mask] for name, col in self.scores.items()}


@dataclass(frozen=True)
class PairStat:
    """Pearson r of two variables over the rows where both are present."""

    x: str
    y: str
    r: float
    p: float
    n: int

    @property
    def mark(self) -> str:
        """The paper's marks: ** for p < 0.05, * for p < 0.1."""
        return "**" if self.p < 0.05 else "*" if self.p < 0.1 else ""


@dataclass(frozen=True)
class LengthFit:
    """Output length = slope * input length + intercept, all models pooled."""

    task: str
    slope: float
    intercept: float
    r: float
    p: float
    stderr: float
    n: int


def length_data(items: list[Item], writings: list[Writing], *, empty: EmptyLengths = "include") -> LengthData:
    """Lengths of every writing whose item is known; empty ones at 0 (`empty="include"`, the paper) or left out."""
    if empty not in EMPTY_LENGTHS:
        raise ValueError(f"empty must be one of {', '.join(EMPTY_LENGTHS)}, not {empty!r}")
    by_id = {item.id: item for item in items}
    known = [w for w in writings if w.item_id in by_id]
    kept = known if empty == "include" else [w for w in known if not w.is_empty]
    inputs = [len(by_id[w.item_id].instruction) + len(by_id[w.item_id].information) for w in kept]
    return LengthData(
        keys=[(w.item_id, w.model) for w in kept],
        task=np.array([by_id[w.item_id].task for w in kept], dtype=object),
        model=np.array([w.model for w in kept], dtype=object),
        input_length=np.array(inputs, dtype=float),
        output_length=np.array([len(w.output) for w in kept], dtype=float),
        empty_skipped=len(known) - len(kept),
        empty_included=sum(1 for w in kept if w.is_empty),
    )


def attach_scores(data: LengthData, judgments: list[Judgment], suffix: str = "",
                  empty: EmptyConvention = "exclude") -> None:
    """Add `overall` and `content` columns (content = the ToW content node; absent for other methods); failures and,
    by default, empty writings have no score (NaN), as in the leaderboard."""
    overall = {(j.item_id, j.model): counted_score(j, empty) for j in judgments}
    content = {(j.item_id, j.model): counted_score(j, empty, "content") for j in judgments}
    for name, source in (("overall", overall), ("content", content)):
        col = np.array([np.nan if source.get(k) is None else source[k] for k in data.keys], dtype=float)
        if np.isfinite(col).any():
            data.scores[name + suffix] = col


def pair_stat(x_name: str, y_name: str, x: np.ndarray, y: np.ndarray) -> PairStat:
    """Pearson r and two-sided p over rows where both values exist; NaN with fewer than 3 rows or no variance."""
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return PairStat(x_name, y_name, float("nan"), float("nan"), n)
    r, p = stats.pearsonr(x[ok], y[ok])
    return PairStat(x_name, y_name, float(r), float(p), n)


def task_correlations(data: LengthData, task: str) -> list[PairStat]:
    """Every pair of analysed variables of one task."""
    variables = data.variables(data.task == task)
    return [pair_stat(a, b, variables[a], variables[b]) for a, b in itertools.combinations(variables, 2)]


def fit_output_on_input(data: LengthData, task: str) -> LengthFit | None:
    """Pooled least-squares fit of output length on input length (None with fewer than 3 writings)."""
    mask = data.task == task
    x, y = data.input_length[mask], data.output_length[mask]
    if x.size < 3 or np.ptp(x) == 0:
        return None
    fit = stats.linregress(x, y)
    return LengthFit(task, float(fit.slope), float(fit.intercept), float(fit.rvalue), float(fit.pvalue),
                     float(fit.stderr), int(x.size))


def tasks_present(data: LengthData) -> list[str]:
    return [t for t in TASKS if (data.task == t).any()]


def correlation_table(data: LengthData) -> Table:
    """Table 6 in long form: one row per task and variable pair."""
    columns = ["Task", "x", "y", "r", "p", "sig", "n"]
    table = Table("Pearson correlation among lengths and scores", columns, digits=3, formats={"p": ".2g"})
    for task in tasks_present(data):
        for st in task_correlations(data, task):
            table.add_row(TASK_NAMES[task], st.x, st.y, st.r, st.p, st.mark, st.n)
    table.notes.append("** p < 0.05, * p < 0.1 (two-sided); lengths in characters; input = instruction + information")
    table.notes += empty_notes(data)
    return table


def empty_notes(data: LengthData) -> list[str]:
    """What happened to the empty writings (always said when there are any)."""
    notes = []
    if data.empty_included:
        notes.append(f"{data.empty_included} empty writings included with output length 0, as the paper's fits "
                     "(--empty exclude leaves them out); they have no score")
    if data.empty_skipped:
        notes.append(f"{data.empty_skipped} empty writings left out (--empty exclude)")
    return notes


def fit_table(data: LengthData) -> Table:
    """Slopes of output length on input length per task, next to the paper's."""
    table = Table("Output length vs input length, all models pooled (least squares)",
                  ["Task", "slope", "intercept", "r", "p", "n", "paper slope"], digits=3, formats={"p": ".2g"})
    for task in tasks_present(data):
        fit = fit_output_on_input(data, task)
        if fit is not None:
            table.add_row(TASK_NAMES[task], fit.slope, fit.intercept, fit.r, fit.p, fit.n, PAPER_SLOPES.get(task))
    table.notes += empty_notes(data)
    return table


def _label(name: str) -> str:
    """Axis label of a column; score columns of several results keep their ' [method]' suffix."""
    base, _, rest = name.partition(" [")
    return VAR_LABELS.get(base, base) + (f" [{rest}" if rest else "")


def _stem(task: str, x_name: str, y_name: str) -> str:
    clean = "".join(c if c.isalnum() or c in "-_" else "-" for c in f"{task}-{x_name}-{y_name}")
    return clean.strip("-")


def scatter_plot(data: LengthData, task: str, x_name: str, y_name: str, out_dir: Path) -> list[Path]:
    """One Figure-5 panel: a colour per model, the pooled least-squares line in bold black."""
    mask = data.task == task
    variables = data.variables(mask)
    x, y, models = variables[x_name], variables[y_name], data.model[mask]
    fig, ax = new_figure(9.0, 5.0)
    for model in sorted(set(models)):
        sel = (models == model) & np.isfinite(y)
        ax.scatter(x[sel], y[sel], s=6, alpha=0.45, label=model)
    ok = np.isfinite(x) & np.isfinite(y)
    fit = stats.linregress(x[ok], y[ok])
    grid = np.linspace(x[ok].min(), x[ok].max(), 50)
    ax.plot(grid, fit.slope * grid + fit.intercept, color="black", linewidth=2.5,
            label=f"all models: y = {fit.slope:.3g}x + {fit.intercept:.3g} (r = {fit.rvalue:.2f})")
    ax.set_xlabel(_label(x_name))
    ax.set_ylabel(_label(y_name))
    ax.set_title(f"{TASK_NAMES[task]}: {_label(y_name)} vs {_label(x_name)}")
    ax.legend(fontsize=7, markerscale=2, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return save_figure(fig, out_dir, _stem(task, x_name, y_name))


def length_plots(data: LengthData, out_dir: Path) -> list[Path]:
    """Every Figure-5 panel the data allows: output vs input length, and each score vs each length."""
    pairs = [("input_length", "output_length")]
    pairs += [(x, y) for y in data.scores for x in ("input_length", "output_length")]
    paths: list[Path] = []
    for task in tasks_present(data):
        variables = data.variables(data.task == task)
        for x_name, y_name in pairs:
            ok = np.isfinite(variables[x_name]) & np.isfinite(variables[y_name])
            if ok.sum() >= 3 and np.ptp(variables[x_name][ok]) > 0:
                paths += scatter_plot(data, task, x_name, y_name, out_dir)
    return paths
