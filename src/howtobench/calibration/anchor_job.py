"""Have the new judge score the anchors: the anchors' texts in a writings file, judged by the ordinary judge step.

The anchor writings are written next to the calibration file (`<out>.anchors.jsonl`) and the new judge's judgments
go to `<out>.new.jsonl`, both through `judge_job`, so the run is resumable, every call is cached by judge model (a
call made before costs nothing), and the estimate shown first counts only the calls not yet cached.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from howtobench.calibration.anchors import allocate
from howtobench.data.loader import load_items, load_release_writings, load_writings_file
from howtobench.data.models import Writing
from howtobench.errors import DataError
from howtobench.judges.base import Judgment
from howtobench.outputs import write_text_atomic


def sidecar(out: Path, suffix: str) -> Path:
    """A file beside the calibration file: CAL.json -> CAL.anchors.jsonl / CAL.new.jsonl."""
    return out.with_name(f"{out.stem}.{suffix}.jsonl")


def anchor_texts(anchors: Iterable[tuple[str, str]], data_dir: Path, writings: Sequence[Path] = ()) -> list[Writing]:
    """The texts of the anchor (item, model) pairs: from `writings` files, else the release's; a missing one stops."""
    wanted = set(anchors)
    items = load_items(data_dir)
    found: dict[tuple[str, str], Writing] = {}
    for path in writings:
        for w in load_writings_file(path, items, selected={i for i, _ in wanted}):
            found.setdefault((w.item_id, w.model), w)
    missing_models = sorted({m for i, m in wanted if (i, m) not in found})
    if missing_models:
        from howtobench.data.loader import release_models

        shipped = {m for task in ("completion", "guide", "open") for m in release_models(data_dir, task)}
        outside = sorted(set(missing_models) - shipped)
        if outside:
            raise DataError(f"no text for the anchors of model {outside[0]!r}: it is not a shipped model; give its "
                            "writings with --writings")
        for w in load_release_writings(data_dir, models=[m for m in missing_models if m in shipped], items=items,
                                       selected={i for i, _ in wanted}):
            found.setdefault((w.item_id, w.model), w)
    lost = [pair for pair in wanted if pair not in found]
    if lost:
        raise DataError(f"no text for anchor {lost[0][1]} on item {lost[0][0]} (and {len(lost) - 1} more) in the "
                        "release or --writings")
    return [found[pair] for pair in sorted(wanted)]


def write_anchor_texts(texts: Sequence[Writing], path: Path) -> None:
    lines = [json.dumps(w.model_dump(by_alias=True), ensure_ascii=False) for w in texts]
    write_text_atomic(path, "\n".join(lines) + "\n")


def paper_anchors(data_dir: Path, models: Sequence[str], n: int, seed: int) -> list[tuple[str, str]]:
    """`n` shipped writings of the paper's `models`, stratified by task × genre × model (a random pick inside each
    stratum: there are no reference scores to spread them by)."""
    items = {it.id: it for it in load_items(data_dir)}
    strata: dict[tuple[str, str, str], list[str]] = {}
    for w in load_release_writings(data_dir, models=models, items=list(items.values())):
        if w.is_empty:
            continue
        it = items[w.item_id]
        strata.setdefault((it.task, it.genre, w.model), []).append(w.item_id)
    take = allocate({s: len(v) for s, v in strata.items()}, n)
    rng = np.random.default_rng(seed)
    return sorted((str(i), s[2]) for s in sorted(strata)
                  for i in rng.choice(sorted(strata[s]), size=take[s], replace=False))


def of_anchors(judgments: Iterable[Judgment], anchors: Iterable[tuple[str, str]]) -> list[Judgment]:
    wanted = set(anchors)
    return [j for j in judgments if (j.item_id, j.model) in wanted]
