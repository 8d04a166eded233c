"""Ablation of the tree's primary nodes (Table 5), recomputed from stored ToW judgments.

The root of ToW is the average of its node scores weighted by each node's number of leaves
(section 3.3). Removing a node (w/o) re-applies that rule to the remaining nodes; keeping a node
alone (w) makes the root that node's score. Leaf counts come from the judgment's own leaves, so a
user tree with more leaves is weighted as that tree says, and only leaves that have a score count: a
renormalised judgment (`--renormalize`, a leaf failed) weighted its nodes by their scored leaves
(`judges.aggregate`), so the full-tree variant reproduces its stored root and the "ToW (all nodes)" row
equals `meta correlate` on the same file. Judgments without a final score (failed) are left out of
every variant, so all rows compare the same writings; so are empty writings by default (`empty="exclude"`,
the authors' convention, as in `meta correlate`).

ToW judged with sampled weights (`--samples n`) stores each sample's node scores (`SampleResult.nodes`) and
the mean of the samples' roots; a variant is recomputed per sample and averaged by the judge's own rule
(`judges.aggregate.mean_root`), so its full tree gives back the stored root. Rows written before per-sample
nodes were stored keep only the first sample's nodes: those judgments are counted by `unreproduced_roots`.
"""

from __future__ import annotations

from collections import Counter

from howtobench.judges.aggregate import mean_root
from howtobench.judges.base import Judgment, left_out_as_empty
from howtobench.meta.correlate import CorrelationRow, CorrelationSettings, Scores, empty_count, score_row

PAPER_NODES: tuple[str, ...] = ("content", "format", "impression")


def leaf_counts(judgment: Judgment) -> dict[str, int]:
    """Number of scored leaves under each node, n_X of the root rule (a node with no recorded leaf counts as one).

    A failed leaf (no score) does not count, as in `judges.aggregate`; an empty writing's leaves carry the
    lowest score and do count."""
    recorded = {leaf.node for leaf in judgment.leaves if leaf.node}
    scored = Counter(leaf.node for leaf in judgment.leaves if leaf.node and leaf.score is not None)
    return {node: scored.get(node, 0) if node in recorded else 1 for node in judgment.nodes}


def _root(nodes: dict[str, float | None], counts: dict[str, int], keep: set[str]) -> float | None:
    parts = [(counts.get(n, 1), s) for n, s in nodes.items() if n in keep and s is not None]
    total = sum(w for w, _ in parts)
    return sum(w * s for w, s in parts) / total if total else None


def per_sample_nodes(judgment: Judgment) -> list[dict[str, float | None]] | None:
    """Each weight sample's node scores, when the judgment sampled weights and stored them (else None)."""
    if len(judgment.samples) < 2 or not all(s.nodes for s in judgment.samples):
        return None
    return [s.nodes for s in judgment.samples]


def recompute_root(judgment: Judgment, keep: set[str]) -> float | None:
    """Leaf-count-weighted mean of the kept nodes that have a score; None when none has. With per-sample node
    scores: that root for each sample, averaged by the judge's rule (`mean_root`)."""
    counts = leaf_counts(judgment)
    samples = per_sample_nodes(judgment)
    if samples is None:
        return _root(judgment.nodes, counts, keep)
    renormalize = bool(judgment.meta.get("renormalize", False))
    return mean_root([_root(nodes, counts, keep) for nodes in samples], renormalize=renormalize)


def node_order(judgments: list[Judgment]) -> list[str]:
    """The paper's nodes first, then any node a custom tree adds, in first-seen order."""
    seen = dict.fromkeys(n for j in judgments for n in j.nodes)
    return [n for n in PAPER_NODES if n in seen] + [n for n in seen if n not in PAPER_NODES]


def variants(nodes: list[str]) -> list[tuple[str, set[str]]]:
    """(label, kept nodes): the full tree, each node removed, each node alone."""
    out = [("ToW (all nodes)", set(nodes))]
    out += [(f"w/o {n.capitalize()}", set(nodes) - {n}) for n in nodes]
    out += [(f"w {n.capitalize()}", {n}) for n in nodes]
    return out


def ablation_scores(judgments: list[Judgment], keep: set[str], settings: CorrelationSettings) -> Scores:
    """Writing -> recomputed root for one variant (judgments that failed overall are skipped, and empty writings
    under the "exclude" convention)."""
    out: Scores = {}
    for j in judgments:
        if j.score is None or left_out_as_empty(j, settings.empty):
            continue
        root = recompute_root(j, keep)
        if root is not None:
            out[(j.item_id, j.model)] = root
    return out


def unreproduced_roots(judgments: list[Judgment], tolerance: float = 1e-9) -> int:
    """How many scored judgments' stored roots the full-tree rule does not give back from their node scores.

    Zero for single-pass ToW and for sampled weights stored with each sample's nodes; a ToW file with sampled
    weights written before those were stored has only the first sample's nodes, so its full-tree row differs
    from `meta correlate`."""
    def reproduced(j: Judgment) -> bool:
        root = recompute_root(j, set(j.nodes))
        return root is not None and j.score is not None and abs(root - j.score) <= tolerance

    return sum(1 for j in judgments if j.score is not None and not reproduced(j))


def ablation_rows(
    judgments: list[Judgment], human: Scores, settings: CorrelationSettings | None = None
) -> list[CorrelationRow]:
    """Table 5: one correlation row per variant."""
    settings = settings or CorrelationSettings()
    tasks = {j.item_id: j.task for j in judgments}
    empties = empty_count(judgments, human)
    return [
        score_row(label, None, ablation_scores(judgments, keep, settings), human, tasks, settings, empties)
        for label, keep in variants(node_order(judgments))
    ]
