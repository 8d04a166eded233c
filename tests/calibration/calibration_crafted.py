"""Crafted Tree-of-Writing judgments with a known truth, for calibration tests and bench/calibration.py.

Each writing has latent leaf answers (1-10, or 1-3 for paragraphing) drawn from a model quality, an item
difficulty and noise. Judge "A" reports them; judge "B" reports every LLM leaf `shift` steps higher, clipped at the
top of the leaf's scale (the issue's "two steps higher, clipped at 10"); the headings leaf is a parser, the same for
both. Roots and nodes are aggregated with the bundled tree exactly as the judge does (judges.aggregate), with fixed
edge weights, so B's root is a monotone but not a linear function of A's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from howtobench.judges.aggregate import aggregate
from howtobench.judges.base import Judgment
from howtobench.judges.tree import Tree, default_tree

TASKS = ("completion", "guide", "open")
GENRES = ("argumentative", "prose", "fiction", "letters")


@functools.cache
def tree() -> Tree:
    return default_tree()


@dataclass(frozen=True)
class Latent:
    item_id: str
    model: str
    task: str
    genre: str
    answers: dict[str, int]


def latent_writings(n_items: int, models: int = 5, seed: int = 0) -> list[Latent]:
    """`n_items` items (tasks and genres in turn) × `models` models of rising quality, with latent leaf answers."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_items):
        task, genre = TASKS[k % len(TASKS)], GENRES[(k // len(TASKS)) % len(GENRES)]
        difficulty = rng.normal(0, 0.8)
        for m in range(models):
            quality = 4.0 + 0.5 * m + difficulty
            answers = {}
            for leaf in tree().leaves_for(task):
                if not leaf.is_llm:
                    answers[leaf.id] = int(rng.choice(leaf.scale))
                    continue
                top = max(leaf.scale)
                value = 1 + (top - 1) * (quality + rng.normal(0, 1.2) - 1) / 9
                answers[leaf.id] = int(np.clip(round(value), 1, top))
            out.append(Latent(f"{task}-{k}", f"model-{m}", task, genre, answers))
    return out


def _weights(task: str) -> dict[str, dict[str, float]]:
    return {node.id: {leaf.id: 1 / len(node.leaves) for leaf in node.leaves}
            for node in tree().negotiated_nodes(task)}


def judgment(w: Latent, judge: str, shift: int = 0) -> Judgment:
    """The judgment of `judge` for one latent writing: LLM answers + `shift` clipped to the leaf's top; the parser's
    headings score is judge-independent."""
    scores: dict[str, float | None] = {}
    for leaf in tree().leaves_for(w.task):
        raw = min(w.answers[leaf.id] + shift, max(leaf.scale)) if leaf.is_llm else w.answers[leaf.id]
        scores[leaf.id] = leaf.score_of(raw)
    agg = aggregate(tree(), w.task, scores, _weights(w.task))
    return Judgment(method="tow", item_id=w.item_id, model=w.model, task=w.task, genre=w.genre, score=agg.root,
                    status=agg.status, nodes=agg.nodes, judge_model=judge, tree_hash="tree-1", prompt_hash="prompts-1")


def judgments(writings: list[Latent], judge: str, shift: int = 0) -> list[Judgment]:
    return [judgment(w, judge, shift) for w in writings]
