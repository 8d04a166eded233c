"""Tree aggregation exactly as sections 3.1 and 3.3 of the paper.

    Score(V_X) = sum_i w_i * Score(L_i)       X in {Content, Format}, w from J_W (node "negotiated")
    Score(V_I) = Score(impression leaf)         (node "single")
    Score(R)   = sum_X n_X * Score(V_X) / sum_X n_X,   n_X = number of leaves of node X

Only the nodes the task has take part (Completion has no Format node), so Completion's root is
(4 C + 1 I) / 5 and Guide's / Open's is (4 C + 3 F + 1 I) / 8 with the default tree. Scores stay on
the leaves' own footing, as in the paper: Content and Impression leaves are 1-10, the Format leaves
are step values 0 / 5 / 10 (paragraphing's 1-3 mapped by y = 5(x - 1)), so a Format node lies in
0-10 and the root mixes the two footings exactly as the authors' aggregation does.

A failed leaf (or missing weights) leaves its node and the root without a score (status "failed").
Only with `renormalize=True` is the root computed over the leaves that were scored: within a node
the remaining weights are divided by their sum, n_X counts only scored leaves, and the status is
"renormalized". A node "mean" (available to user trees) averages its leaves.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from howtobench.judges.base import Status
from howtobench.judges.tree import Node, Tree

LeafScores = dict[str, float | None]
NodeWeights = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Aggregate:
    """Node scores, the root, the status and why any of them is missing."""

    nodes: dict[str, float | None]
    root: float | None
    status: Status
    notes: list[str] = field(default_factory=list)


def _edge_weights(node: Node, weights: NodeWeights) -> dict[str, float] | None:
    """The weight of each leaf under `node`, or None when a negotiated node has no weights."""
    if node.aggregation == "single" or len(node.leaves) == 1:
        return {node.leaves[0].id: 1.0}
    if node.aggregation == "mean":
        return {leaf.id: 1 / len(node.leaves) for leaf in node.leaves}
    given = weights.get(node.id)
    if given is None or any(leaf.id not in given for leaf in node.leaves):
        return None
    return {leaf.id: given[leaf.id] for leaf in node.leaves}


def node_score(node: Node, scores: LeafScores, weights: NodeWeights, *, renormalize: bool) -> tuple[float | None, str]:
    """Score(V_X) and, when it is None or renormalised, the reason."""
    edges = _edge_weights(node, weights)
    if edges is None:
        return None, f"{node.id}: no edge weights"
    values = {leaf: v for leaf in edges if (v := scores.get(leaf)) is not None}
    scored = {leaf: w for leaf, w in edges.items() if leaf in values}
    if len(scored) == len(edges):
        return sum(w * values[leaf] for leaf, w in edges.items()), ""
    missing = sorted(set(edges) - set(scored))
    if not renormalize or not scored:
        return None, f"{node.id}: leaves without a score: {missing}"
    total = sum(scored.values())
    if abs(total) < 1e-9:
        return None, f"{node.id}: weights of the scored leaves sum to 0, cannot renormalise"
    value = sum(w / total * values[leaf] for leaf, w in scored.items())
    return value, f"{node.id}: renormalised over {sorted(scored)} (missing {missing})"


def aggregate(
    tree: Tree, task: str, scores: LeafScores, weights: NodeWeights, *, renormalize: bool = False
) -> Aggregate:
    """Node and root scores of one writing from its leaf scores and its item's edge weights."""
    nodes: dict[str, float | None] = {}
    notes: list[str] = []
    weighted, count = 0.0, 0
    for node in tree.nodes_for(task):
        value, note = node_score(node, scores, weights, renormalize=renormalize)
        nodes[node.id] = value
        if note:
            notes.append(note)
        if value is not None:
            n = sum(1 for leaf in node.leaves if scores.get(leaf.id) is not None)
            weighted, count = weighted + n * value, count + n
    complete = all(v is not None for v in nodes.values()) and not notes
    if complete:
        return Aggregate(nodes, weighted / count, "ok", notes)
    if renormalize and count > 0:
        return Aggregate(nodes, weighted / count, "renormalized", notes)
    return Aggregate(nodes, None, "failed", notes)


def mean_root(roots: Sequence[float | None], *, renormalize: bool) -> float | None:
    """The root of a judgment with sampled weights: the mean of its samples' roots. A sample without a root makes it
    unavailable, unless `renormalize` (then the mean of the others; None when no sample has one). The judge and
    `meta ablation` (which recomputes each sample's root without a node) both use this rule."""
    scored = [r for r in roots if r is not None]
    if not scored or (len(scored) < len(roots) and not renormalize):
        return None
    return statistics.fmean(scored)
