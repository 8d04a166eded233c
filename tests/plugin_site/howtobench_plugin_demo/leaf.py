"""Leaf kind `count-paragraphs`: a deterministic leaf scoring the number of paragraphs (1-10), never a model call."""

from __future__ import annotations

from howtobench.judges.tree import LeafKind, register_leaf_kind


def score(text: str) -> tuple[int, str]:
    paragraphs = [line for line in text.splitlines() if line.strip()]
    return min(10, max(1, len(paragraphs))), f"{len(paragraphs)} paragraphs (a plugin)"


register_leaf_kind(LeafKind("count-paragraphs", score=score))
