"""Aggregation equals the paper's formulas on hand-computed Guide and Completion cases."""

from __future__ import annotations

import pytest

from howtobench.judges.aggregate import aggregate
from howtobench.judges.tree import default_tree

TREE = default_tree()
WEIGHTS = {
    "content": {"opening_ending": 0.4, "language": 0.3, "logic": 0.2, "emotion": 0.1},
    "format": {"plots": 0.5, "paragraphing": 0.3, "formatting": 0.2},
}
SCORES: dict[str, float | None] = {
    "opening_ending": 8, "language": 6, "logic": 7, "emotion": 5,   # content: 3.2 + 1.8 + 1.4 + 0.5 = 6.9
    "plots": 10, "paragraphing": 5, "formatting": 10,                # format: 5 + 1.5 + 2 = 8.5
    "impression": 7,
}


def test_guide_root_is_leaf_count_weighted() -> None:
    result = aggregate(TREE, "guide", SCORES, WEIGHTS)
    assert result.status == "ok" and result.notes == []
    assert result.nodes == pytest.approx({"content": 6.9, "format": 8.5, "impression": 7.0})
    assert result.root == pytest.approx((4 * 6.9 + 3 * 8.5 + 1 * 7) / 8)  # 7.5125


def test_completion_has_no_format_node() -> None:
    result = aggregate(TREE, "completion", SCORES, {"content": WEIGHTS["content"]})
    assert set(result.nodes) == {"content", "impression"}
    assert result.root == pytest.approx((4 * 6.9 + 7) / 5)  # 6.92


def test_negative_weight_counts_against() -> None:
    weights = {**WEIGHTS, "content": {"opening_ending": 0.6, "language": 0.6, "logic": 0.3, "emotion": -0.5}}
    result = aggregate(TREE, "completion", SCORES, weights)
    assert result.nodes["content"] == pytest.approx(0.6 * 8 + 0.6 * 6 + 0.3 * 7 - 0.5 * 5)  # 8.0


def test_failed_leaf_means_no_root() -> None:
    scores = {**SCORES, "logic": None}
    result = aggregate(TREE, "guide", scores, WEIGHTS)
    assert result.status == "failed" and result.root is None and result.nodes["content"] is None
    assert result.nodes["format"] == pytest.approx(8.5)
    assert "logic" in result.notes[0]


def test_renormalize_over_remaining_leaves() -> None:
    scores = {**SCORES, "logic": None}
    result = aggregate(TREE, "guide", scores, WEIGHTS, renormalize=True)
    content = (0.4 * 8 + 0.3 * 6 + 0.1 * 5) / 0.8  # 6.875
    assert result.status == "renormalized"
    assert result.nodes["content"] == pytest.approx(content)
    assert result.root == pytest.approx((3 * content + 3 * 8.5 + 7) / 7)


def test_missing_weights_fail_the_node() -> None:
    result = aggregate(TREE, "guide", SCORES, {"content": WEIGHTS["content"]})
    assert result.status == "failed" and result.nodes["format"] is None and "format: no edge weights" in result.notes
    renormalized = aggregate(TREE, "guide", SCORES, {"content": WEIGHTS["content"]}, renormalize=True)
    assert renormalized.root == pytest.approx((4 * 6.9 + 7) / 5) and renormalized.status == "renormalized"


def test_lowest_scores_aggregate_to_lowest_whatever_the_weights() -> None:
    lowest = {leaf.id: leaf.lowest[1] for leaf in TREE.leaves_for("guide")}
    result = aggregate(TREE, "guide", lowest, WEIGHTS)
    assert result.nodes == pytest.approx({"content": 1.0, "format": 0.0, "impression": 1.0})
    assert result.root == pytest.approx((4 * 1 + 3 * 0 + 1) / 8)
