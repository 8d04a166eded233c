"""Crafted judgments over the release's real writing and reference lengths (Open, every release model): a judge
with a planted length effect, for the length-control tests."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from howtobench.data.loader import load_items, load_release_writings
from howtobench.judges.base import Judgment

Lengths = dict[tuple[str, str], tuple[int, int]]


def release_lengths(root: Path, task: str = "open") -> Lengths:
    """(model, item id) → (writing chars, reference chars) of the release's non-empty writings of `task`."""
    items = {i.id: i for i in load_items(root, [task])}
    out = {}
    for w in load_release_writings(root, [task], items=list(items.values())):
        ref = len(items[w.item_id].reference)
        if w.output and ref:
            out[(w.model, w.item_id)] = (len(w.output), ref)
    return out


def judged(lengths: Lengths, score: Callable[[str, str, float], float], task: str = "open",
           seed: int = 0, clip: bool = True) -> list[Judgment]:
    """One judgment per writing: `score(model, item, ln ratio)` plus noise (SD 0.3), clipped to the 1-10 scale
    (unless `clip` is False: a planted line then stays a line, for a recovery test)."""
    rng = np.random.default_rng(seed)
    out = []
    for (model, item), (chars, ref) in sorted(lengths.items()):
        value = score(model, item, math.log(chars / ref)) + float(rng.normal(0, 0.3))
        value = float(np.clip(value, 1.0, 10.0)) if clip else value
        out.append(Judgment(method="tow", item_id=item, model=model, task=task, genre="prose", score=value,
                            writing_chars=chars, reference_chars=ref))
    return out


def item_effects(lengths: Lengths, seed: int = 1) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {item: float(rng.normal(0, 0.8)) for item in sorted({i for _, i in lengths})}
