"""Completion items (paper 4.4-4.5): remove 1-10 whole consecutive paragraphs and ask for them back.

The removed paragraphs become one `[fill in the blank]` paragraph in the information, and the reference is
exactly the removed paragraphs joined by a blank line: the layout of the release's completion/aligned.jsonl
(one marker on its own paragraph, every item). Rules, so the blank always has context:
- the text needs at least 3 paragraphs;
- at most 10 paragraphs and at most half of the text are removed (k in 1..min(10, n // 2));
- the first paragraph is never removed (the opening sets the context), the blank may reach the end.
The choice is seeded per text (seed, text_id), so it does not depend on which texts are built together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from howtobench.construct.text import paragraphs

BLANK = "[fill in the blank]"
MAX_REMOVED = 10
MIN_PARAGRAPHS = 3


@dataclass(frozen=True)
class Blanked:
    information: str
    reference: str
    start: int
    removed: int


def rng_for(seed: int, text_id: str) -> np.random.Generator:
    """A generator that depends only on the run seed and the text, not on the order of the texts."""
    return np.random.default_rng([seed, int(text_id.lstrip("t"), 16)])


def blank_out(text: str, rng: np.random.Generator) -> Blanked:
    """Remove a run of whole paragraphs; raises ValueError when the text is too short to blank."""
    paras = paragraphs(text)
    n = len(paras)
    if n < MIN_PARAGRAPHS:
        raise ValueError(f"completion needs at least {MIN_PARAGRAPHS} paragraphs, the text has {n}")
    k = int(rng.integers(1, min(MAX_REMOVED, n // 2) + 1))
    start = int(rng.integers(1, n - k + 1))
    removed = paras[start : start + k]
    kept = [*paras[:start], BLANK, *paras[start + k :]]
    return Blanked(information="\n\n".join(kept), reference="\n\n".join(removed), start=start, removed=k)
