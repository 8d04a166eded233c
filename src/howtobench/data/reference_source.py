"""A model's writing as the reference (Appendix B.3, Table 12): `--reference-from MODEL|FILE`.

The paper keeps HoWToBench's instructions and guiding information and puts one model's writing in place of the
human reference as the 6-point anchor. The source is a shipped model of the release (its writings file) or a
writings file of the user's (`infer_id`, `model`, `output` per line). Each item's reference becomes that
writing and the item records where it came from (`Item.reference_source`, copied onto every judgment). A writing
judged against itself (the reference model's own, or the same text) is skipped and counted, and so is an item
the source has no writing for (or only an empty one): without a reference it cannot be judged in this setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from howtobench.data.loader import load_release_writings, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.data.release import RELEASE_MODELS
from howtobench.errors import DataError
from howtobench.suggest import unknown_name

Pairs = list[tuple[Item, Writing]]


@dataclass(frozen=True)
class ReferenceSwap:
    """The writings that become the references, by item id, and the label every judgment records."""

    source: str
    references: dict[str, Writing]


@dataclass(frozen=True)
class SwapCounts:
    """What swapping the references left out."""

    against_itself: int = 0
    without_reference: int = 0

    def line(self, source: str) -> str:
        return (f"reference from {source}: {self.against_itself} writings skipped (judged against themselves), "
                f"{self.without_reference} skipped (no reference writing for their item)")


def load_reference_source(spec: str, data_dir: Path, items: Sequence[Item]) -> ReferenceSwap:
    """The references `spec` names: a writings file (a path that exists) or a shipped model of the release."""
    path = Path(spec)
    if path.is_file():
        writings = load_writings_file(path, list(items))
        return ReferenceSwap(f"file:{path.name}", {w.item_id: w for w in writings})
    if spec not in RELEASE_MODELS:
        raise DataError(f"--reference-from: {unknown_name('shipped model', spec, RELEASE_MODELS)} "
                        "(or the path of a writings file)")
    tasks = sorted({it.task for it in items})
    writings = load_release_writings(data_dir, tasks, (spec,), items=list(items))
    return ReferenceSwap(f"model:{spec}", {w.item_id: w for w in writings})


def swap_references(pairs: Pairs, swap: ReferenceSwap) -> tuple[Pairs, SwapCounts]:
    """The pairs with each item's reference replaced by the source's writing; self-judgments and items without
    a reference writing left out and counted."""
    kept: Pairs = []
    itself = missing = 0
    swapped: dict[str, Item] = {}
    for item, writing in pairs:
        reference = swap.references.get(item.id)
        if reference is None or reference.is_empty:
            missing += 1
            continue
        if reference.model == writing.model or reference.output == writing.output:
            itself += 1
            continue
        if item.id not in swapped:
            swapped[item.id] = item.model_copy(update={"reference": reference.output,
                                                       "reference_source": swap.source})
        kept.append((swapped[item.id], writing))
    return kept, SwapCounts(itself, missing)
