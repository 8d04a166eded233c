"""Judge vs judge (and vs human) agreement: the sample-level Pearson matrix of Appendix B.1, Figure 4.

As in the paper, each judge's scores of every (item, model) writing are one long vector (all models
concatenated) and two judges are compared on the writings both scored; failures are left out, and so are
empty writings by default (`empty="exclude"`, the authors' convention; `empty_writings` counts them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from howtobench.document import Table
from howtobench.judges.base import EmptyConvention, Judgment
from howtobench.meta.correlate import final_scores
from howtobench.meta.human import WritingKey
from howtobench.meta.length import pair_stat
from howtobench.meta.plots import new_figure, save_figure

HUMAN = "human"
T = TypeVar("T")


@dataclass(frozen=True)
class JudgeMatrix:
    """Symmetric Pearson matrix with the number of shared writings behind each cell."""

    labels: list[str]
    r: np.ndarray
    n: np.ndarray


def judge_label(path: Path, judgments: list[Judgment]) -> str:
    """A file's name in the matrix: its judge model when it has exactly one, else its method(s), else its stem."""
    judges = {j.judge_model for j in judgments if j.judge_model}
    methods = {j.method for j in judgments}
    if len(judges) == 1:
        return judges.pop()
    return methods.pop() if len(methods) == 1 else path.stem


ScoreSets = dict[str, dict[WritingKey, float]]


def _kept(judgments: list[Judgment], tasks: list[str] | None) -> list[Judgment]:
    return [j for j in judgments if tasks is None or j.task in tasks]


def _labelled(files: dict[Path, list[Judgment]], value: Callable[[list[Judgment]], T]) -> dict[str, T]:
    """`value` of each file's judgments under the file's unique label (a repeated label gets the file stem)."""
    out: dict[str, T] = {}
    for path, judgments in files.items():
        label = judge_label(path, judgments)
        out[label if label not in out else f"{label} ({path.stem})"] = value(judgments)
    return out


def labelled_scores(files: dict[Path, list[Judgment]], tasks: list[str] | None = None,
                    empty: EmptyConvention = "exclude") -> ScoreSets:
    """Final scores per file under unique labels (a repeated label gets the file stem appended)."""
    return _labelled(files, lambda js: final_scores(_kept(js, tasks), empty))


def labelled_empty_counts(files: dict[Path, list[Judgment]], tasks: list[str] | None = None) -> dict[str, int]:
    """Judgments of empty writings per file, under the labels of `labelled_scores`."""
    return _labelled(files, lambda js: sum(1 for j in _kept(js, tasks) if j.status == "empty"))


def empty_writings(files: dict[Path, list[Judgment]], tasks: list[str] | None = None) -> int:
    """Distinct empty writings (item, model) judged in any of the files."""
    return len({(j.item_id, j.model) for js in files.values() for j in _kept(js, tasks) if j.status == "empty"})


def judge_matrix(scores: ScoreSets) -> JudgeMatrix:
    """Pearson r between every pair of score sets over their shared writings (NaN with fewer than 3)."""
    labels = list(scores)
    size = len(labels)
    r = np.eye(size)
    n = np.zeros((size, size), dtype=int)
    for a in range(size):
        n[a, a] = len(scores[labels[a]])
        for b in range(a + 1, size):
            shared = sorted(scores[labels[a]].keys() & scores[labels[b]].keys())
            x = np.array([scores[labels[a]][k] for k in shared], dtype=float)
            y = np.array([scores[labels[b]][k] for k in shared], dtype=float)
            st = pair_stat(labels[a], labels[b], x, y)
            r[a, b] = r[b, a] = st.r
            n[a, b] = n[b, a] = st.n
    return JudgeMatrix(labels, r, n)


def matrix_table(matrix: JudgeMatrix, empties: dict[str, int] | None = None) -> Table:
    """The matrix as rows (one column per judge) with the smallest shared count in a note; with `empties`, a last
    column counts each judge's empty writings (none for the human row)."""
    extra = ["empty writings"] if empties is not None else []
    table = Table("Sample-level Pearson correlation between judges", ["judge", *matrix.labels, *extra])
    for i, label in enumerate(matrix.labels):
        table.add_row(label, *(float(v) for v in matrix.r[i]), *([empties.get(label)] if empties is not None else []))
    off = matrix.n[~np.eye(len(matrix.labels), dtype=bool)]
    if off.size:
        table.notes.append(f"writings shared per pair: {int(off.min())} to {int(off.max())} (all models concatenated)")
    return table


TITLE = "Pearson correlation across judges and humans"


def heatmap(matrix: JudgeMatrix, out_dir: Path, title: str = TITLE) -> list[Path]:
    """Annotated heatmap (Figure 4)."""
    size = len(matrix.labels)
    fig, ax = new_figure(2.0 + 1.1 * size, 1.5 + 1.0 * size)
    image = ax.imshow(matrix.r, vmin=-1.0, vmax=1.0, cmap="RdBu_r")
    ax.set_xticks(range(size), matrix.labels, rotation=35, ha="right")
    ax.set_yticks(range(size), matrix.labels)
    for i in range(size):
        for j in range(size):
            value = matrix.r[i, j]
            text = "-" if np.isnan(value) else f"{value:.2f}"
            ax.text(j, i, text, ha="center", va="center", color="white" if abs(value) > 0.6 else "black")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="Pearson r")
    ax.set_title(title)
    return save_figure(fig, out_dir, "judges-heatmap")
