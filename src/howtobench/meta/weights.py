"""Edge-weight distributions per genre and leaf (section 5.3, Figures 3 and 6).

The negotiator's weights depend only on the instruction, so each item counts once however many
models were judged on it. A leaf's node comes from the judgment's own leaves, else from the default
tree, so `node="content"` selects the four content leaves of Figure 3 (or a custom tree's leaves).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from howtobench.data.genres import GENRES
from howtobench.document import Table
from howtobench.judges.base import Judgment
from howtobench.judges.tree import default_tree
from howtobench.meta.plots import new_figure, save_figure


def _horizontal() -> dict[str, object]:
    """boxplot's keyword for horizontal boxes: `orientation` from matplotlib 3.10, `vert` before."""
    import matplotlib

    version = tuple(int(p) for p in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if version >= (3, 10) else {"vert": False}


@dataclass(frozen=True)
class WeightSet:
    """The weights one item received, with its genre."""

    item_id: str
    genre: str
    weights: dict[str, float]


def _tree_nodes() -> dict[str, str]:
    return {leaf.id: node.id for node in default_tree().nodes for leaf in node.leaves}


def leaf_labels() -> dict[str, str]:
    """Leaf id -> 'id (中文)' from the default tree, for readable axes."""
    return {leaf.id: f"{leaf.id} ({leaf.label.zh})" for node in default_tree().nodes for leaf in node.leaves}


def weight_sets(judgments: list[Judgment], node: str | None = "content") -> list[WeightSet]:
    """One weight set per item (first judgment seen), restricted to the leaves of `node` (None = all)."""
    fallback = _tree_nodes()
    out: dict[str, WeightSet] = {}
    for j in judgments:
        if j.item_id in out or not j.weights:
            continue
        nodes = fallback | {leaf.name: leaf.node for leaf in j.leaves if leaf.node}
        kept = {k: w for k, w in j.weights.items() if node is None or nodes.get(k) == node}
        if kept:
            out[j.item_id] = WeightSet(j.item_id, j.genre, kept)
    return list(out.values())


def by_genre(sets: list[WeightSet]) -> dict[str, dict[str, list[float]]]:
    """genre -> leaf -> weights, genres in the order of the genre table (then unknown ones)."""
    grouped: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in sets:
        for leaf, w in s.weights.items():
            grouped[s.genre][leaf].append(w)
    order = [g for g in GENRES if g in grouped] + sorted(g for g in grouped if g not in GENRES)
    return {g: dict(grouped[g]) for g in order}


def genre_title(genre: str) -> str:
    """'小说 Fiction' for known genres, the id otherwise."""
    g = GENRES.get(genre)
    return f"{g.zh} {g.en}" if g else genre


def weight_table(sets: list[WeightSet], node: str | None = "content") -> Table:
    """Distribution summary per genre and leaf."""
    cols = ["genre", "leaf", "n", "mean", "std", "min", "q1", "median", "q3", "max"]
    table = Table(f"Edge weights per genre ({node or 'all nodes'})", cols, digits=3)
    for genre, leaves in by_genre(sets).items():
        for leaf, values in leaves.items():
            v = np.asarray(values)
            q1, med, q3 = np.percentile(v, [25, 50, 75])
            table.add_row(genre_title(genre), leaf, v.size, float(v.mean()), float(v.std(ddof=0)), float(v.min()),
                          float(q1), float(med), float(q3), float(v.max()))
    table.notes.append("one weight set per instruction (shared by every model judged on it)")
    return table


def weight_plots(sets: list[WeightSet], out_dir: Path, node: str | None = "content") -> list[Path]:
    """One horizontal box plot per genre: the wider a box, the more that leaf's weight varies in the genre."""
    labels = leaf_labels()
    paths: list[Path] = []
    for genre, leaves in by_genre(sets).items():
        names = list(leaves)
        n_items = max(len(v) for v in leaves.values())
        fig, ax = new_figure(7.0, 1.2 + 0.6 * len(names))
        ax.boxplot([leaves[n] for n in names], widths=0.6, **_horizontal())
        ax.set_yticks(range(1, len(names) + 1), [labels.get(n, n) for n in names])
        ax.set_xlabel("edge weight")
        ax.set_title(f"{genre_title(genre)}: {node or 'all'} edge weights ({n_items} instructions)")
        ax.grid(axis="x", alpha=0.3)
        paths += save_figure(fig, out_dir, f"weights-{genre}")
    return paths
