"""Node ablation (Table 5) on judgments whose recomputed roots are known exactly."""

from __future__ import annotations

import math

import pytest
from meta_helpers import judgment

from howtobench.judges.base import Judgment, LeafResult
from howtobench.meta.ablation import ablation_rows, leaf_counts, recompute_root, unreproduced_roots, variants
from howtobench.meta.correlate import CorrelationSettings, correlate_method

LEAVES = {"content": 4, "format": 3, "impression": 1}


def tow(item: str, model: str, c: float, f: float | None, i: float, task: str = "guide") -> Judgment:
    nodes: dict[str, float | None] = {"content": c, "format": f, "impression": i}
    if task == "completion":
        del nodes["format"]
    leaves = [LeafResult(name=f"{n}{k}", node=n, score=1.0) for n in nodes for k in range(LEAVES[n])]
    root = recompute_root(Judgment(method="tow", item_id=item, model=model, task=task, genre="x", nodes=nodes,
                                   leaves=leaves), set(nodes))
    return judgment(item, model, root, task=task, nodes=nodes, leaves=leaves)


def test_recompute_rule() -> None:
    j = tow("i", "m", 8.0, 4.0, 6.0)
    assert leaf_counts(j) == {"content": 4, "format": 3, "impression": 1}
    assert j.score == pytest.approx((4 * 8 + 3 * 4 + 6) / 8)
    assert recompute_root(j, {"content", "impression"}) == pytest.approx((4 * 8 + 6) / 5)
    assert recompute_root(j, {"format"}) == 4.0
    comp = tow("i", "m", 8.0, None, 6.0, task="completion")
    assert recompute_root(comp, {"format"}) is None
    assert recompute_root(comp, {"content", "impression"}) == comp.score
    assert [v[0] for v in variants(["content", "format", "impression"])] == [
        "ToW (all nodes)", "w/o Content", "w/o Format", "w/o Impression", "w Content", "w Format", "w Impression",
    ]


def test_ablation_rows_correlations() -> None:
    # humans follow content exactly; format is reversed; impression is constant
    js, human = [], {}
    for i in range(3):
        for k, m in enumerate("abcd"):
            js.append(tow(f"i{i}", m, 2.0 + k, 9.0 - k, 5.0))
            human[(f"i{i}", m)] = 1.0 + k
    js.append(judgment("i0", "e", None, nodes={"content": 9.0}))  # failed overall: left out everywhere
    human[("i0", "e")] = 5.0
    rows = {r.method: r for r in ablation_rows(js, human, CorrelationSettings(n_boot=50))}
    assert rows["w Content"].cells[("system", "guide", "pearson")].value == pytest.approx(1.0)
    assert rows["w Format"].cells[("sample", "all", "kendall")].value == pytest.approx(-1.0)
    # w/o Content: (3 * (9 - k) + 5) / 4 decreases with k -> perfectly anti-correlated
    assert rows["w/o Content"].cells[("system", "all", "spearman")].value == pytest.approx(-1.0)
    # full: (4(2+k) + 3(9-k) + 5) / 8 = (40 + k) / 8 increases with k
    assert rows["ToW (all nodes)"].cells[("system", "all", "pearson")].value == pytest.approx(1.0)
    constant = rows["w Impression"].cells[("system", "all", "pearson")].value
    assert math.isnan(constant)  # constant scores: undefined, never a made-up number
    assert rows["ToW (all nodes)"].n_models["all"] == 4


def _renormalised(item: str, model: str, k: int) -> Judgment:
    """A Guide judgment of the default tree scored by `judges.aggregate` with one Content leaf failed."""
    from howtobench.judges.aggregate import aggregate
    from howtobench.judges.tree import default_tree

    tree = default_tree()
    leaves = [LeafResult(name=leaf.id, node=node.id, score=float(2 + (k * 3 + n) % 8))
              for node in tree.nodes_for("guide") for n, leaf in enumerate(node.leaves)]
    if k % 2 == 0:  # every other writing lost its first content leaf
        leaves[0] = LeafResult(name=leaves[0].name, node="content", score=None, status="failed")
    weights = {node.id: {leaf.id: 1 / len(node.leaves) for leaf in node.leaves} for node in tree.negotiated_nodes()}
    agg = aggregate(tree, "guide", {x.name: x.score for x in leaves}, weights, renormalize=True)
    return judgment(item, model, agg.root, status=agg.status, nodes=agg.nodes, leaves=leaves)


def test_renormalised_judgments_count_only_scored_leaves() -> None:
    js = [_renormalised(f"i{i}", m, i + 3 * k) for i in range(4) for k, m in enumerate("abc")]
    broken = next(j for j in js if j.status == "renormalized")
    # 4 content leaves, one failed: the stored root weighted content by 3 (hand: (3 C + 3 F + I) / 7)
    assert leaf_counts(broken) == {"content": 3, "format": 3, "impression": 1}
    c, f, i = broken.nodes["content"], broken.nodes["format"], broken.nodes["impression"]
    assert broken.score == pytest.approx((3 * c + 3 * f + i) / 7)  # type: ignore[operator]
    for j in js:
        assert recompute_root(j, set(j.nodes)) == pytest.approx(j.score)
    # the full-tree row of Table 5 is the `meta correlate` row of the same file, cell for cell
    human = {(j.item_id, j.model): float((7 * n) % 5 + 1) for n, j in enumerate(js)}
    settings = CorrelationSettings(n_boot=50)
    full = ablation_rows(js, human, settings)[0]
    (plain,) = correlate_method("tow", js, human, settings)
    assert full.cells == plain.cells
    assert unreproduced_roots(js) == 0
    # a sampled-weights ToW judgment: mean root over samples, first sample's nodes -> flagged, not silently mixed
    sampled = js[1].model_copy(update={"score": (js[1].score or 0) + 0.25})
    assert unreproduced_roots([*js, sampled]) == 1
