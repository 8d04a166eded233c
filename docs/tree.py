"""Draw the README's picture of the Tree-of-Writing from the bundled tree spec (`judges/trees/default.yaml`).

    python docs/tree.py            # writes docs/tree.svg

The drawing reads the same `Tree` the judge runs, so a leaf added to the spec appears here when it is redrawn:
the root, its three nodes with how each aggregates, and every leaf with its scorer kind and scale.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from howtobench.judges.tree import Leaf, Node, Tree, default_tree
from howtobench.meta.plots import new_figure

HERE = Path(__file__).parent
AGGREGATION = {"negotiated": "weights negotiated per instruction", "mean": "mean of its leaves",
               "single": "one leaf"}
NODE_COLOURS = {"content": "#dbe9f6", "format": "#e5f3df", "impression": "#fbe7d3"}


def leaf_text(leaf: Leaf) -> str:
    scale = sorted({int(leaf.score_of(raw)) for raw in leaf.scale})
    values = f"{scale[0]}-{scale[-1]}" if len(scale) > 3 else " / ".join(map(str, scale))
    scorer = "heading parser" if leaf.kind == "regex-headings" else leaf.kind
    return f"{leaf.label.en}\n{scorer}, {values}"


def node_text(node: Node) -> str:
    tasks = "" if len(node.tasks) == 3 else f"\n({', '.join(node.tasks)} only)"
    return f"{node.label.en}\n{AGGREGATION[node.aggregation]}{tasks}"


def box(ax: object, x: float, y: float, text: str, colour: str, size: float = 8.5) -> None:
    ax.text(x, y, text, ha="center", va="center", fontsize=size,  # type: ignore[attr-defined]
            bbox={"boxstyle": "round,pad=0.45", "facecolor": colour, "edgecolor": "#555555", "linewidth": 0.8})


def root_text(tree: Tree) -> str:
    """The root's formula as the tree computes it: nodes weighted by their number of leaves."""
    terms = " + ".join(f"{len(n.leaves)}·{n.label.en[0]}" for n in tree.nodes)
    return f"Root = ({terms}) / {sum(len(n.leaves) for n in tree.nodes)}\n(nodes weighted by their number of leaves)"


def main() -> None:
    tree = default_tree()
    leaves = [(node, leaf) for node in tree.nodes for leaf in node.leaves]
    fig, ax = new_figure(width=13.0, height=4.6)
    ax.set_xlim(-0.6, len(leaves) - 0.4)
    ax.set_ylim(-0.5, 2.5)
    ax.axis("off")
    box(ax, (len(leaves) - 1) / 2, 2.2, root_text(tree), "#eeeeee", 9.5)
    position = 0
    for node in tree.nodes:
        xs = [position + i for i in range(len(node.leaves))]
        centre = sum(xs) / len(xs)
        ax.plot([(len(leaves) - 1) / 2, centre], [2.05, 1.35], color="#888888", linewidth=0.8, zorder=0)
        box(ax, centre, 1.2, node_text(node), NODE_COLOURS.get(node.id, "#eeeeee"), 9)
        for x, leaf in zip(xs, node.leaves, strict=True):
            ax.plot([centre, x], [1.02, 0.2], color="#888888", linewidth=0.8, zorder=0)
            box(ax, x, 0.0, leaf_text(leaf), "#ffffff")
        position += len(node.leaves)
    ax.set_title(f"The Tree-of-Writing judge ({tree.name}): every leaf is scored on its own, "
                 "then aggregated up the tree", fontsize=10)
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: a small file, searchable, readable by screen readers
    fig.tight_layout()
    fig.savefig(HERE / "tree.svg", bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    main()
