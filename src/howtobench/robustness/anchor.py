"""`run --length-anchor N`: the writings whose pad and truncate variants the judge also judges, so the judge's own
length slope can be measured (report.length_anchor) instead of read off an association.

N writings are drawn across tasks and models — round robin over (task, model) strata in a seeded order, so a
small N still covers every model and task — and each gets two rule-based variants (no model call): `pad`
(off-topic filler appended up to the writing's own length: about twice as long, content kept) and `truncate` (the
first two thirds). Variants are named `<model>+pad` / `<model>+truncate` like every perturbation, judged into
`RUN_DIR/anchor/<method>.jsonl`, and paired with the run's own judgments of the originals.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from howtobench.data.models import Item, Writing
from howtobench.report.length_anchor import ANCHOR_KINDS
from howtobench.robustness.apply import derive_seed, perturbed_writing
from howtobench.robustness.perturb import RULES, PerturbContext

ANCHOR_DIR = "anchor"


def anchor_file(run_dir: Path, method: str) -> Path:
    """Where a run keeps its anchor judgments (the report of the run directory reads them from there)."""
    return run_dir / ANCHOR_DIR / f"{method}.jsonl"


def anchor_sample(writings: Sequence[Writing], items: Mapping[str, Item], n: int, seed: int) -> list[Writing]:
    """`n` non-empty writings of the run's items, round robin over (task, model) strata in a seeded order."""
    strata: dict[tuple[str, str], list[Writing]] = {}
    for w in sorted(writings, key=lambda w: (w.item_id, w.model)):
        item = items.get(w.item_id)
        if item is not None and w.output.strip() and item.reference:
            strata.setdefault((item.task, w.model), []).append(w)
    rng = random.Random(seed)
    for rows in strata.values():
        rng.shuffle(rows)
    keys = sorted(strata)
    rng.shuffle(keys)
    out: list[Writing] = []
    while len(out) < n and any(strata[k] for k in keys):
        for k in keys:
            if strata[k] and len(out) < n:
                out.append(strata[k].pop())
    return out


def anchor_variants(sample: Sequence[Writing], items: Mapping[str, Item], seed: int) -> list[Writing]:
    """The pad and truncate variant of each sampled writing (rule-based, seeded per writing)."""
    out = []
    for w in sample:
        ctx = PerturbContext(reference=items[w.item_id].reference)
        for kind in ANCHOR_KINDS:
            result = RULES[kind](w.output, derive_seed(seed, w.item_id, w.model, kind), ctx)
            if result.text:
                out.append(perturbed_writing(w, kind, seed, result))
    return out
