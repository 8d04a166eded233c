"""Read the writings to perturb and write perturbed writings, for `howtobench perturb` and the suite.

Input is either a writings JSONL (the release inference layout or any user file with
infer_id/item_id, model and output/text) or a judgment results JSONL (rows with `method`,
`item_id`, `model`), whose texts are looked up in the benchmark's release writings. The
benchmark (`--data`) also supplies each item's language, its reference (for the `reference`
control) and the filler pool for `pad` (other items' references in the same language).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from howtobench.data.models import Item, Writing
from howtobench.errors import DataError
from howtobench.outputs import write_text_atomic
from howtobench.robustness.perturb import PerturbContext
from howtobench.robustness.text_units import detect_language

POOL_SIZE = 8  # references offered to `pad` per writing: enough text, cheap to build


def writings_for_judgments(path: Path, release: Sequence[Writing]) -> list[Writing]:
    """The release writings a judgment file scored, in the file's order (each (item, model) once)."""
    from howtobench.judges.runner import read_judgments

    by_key = {(w.item_id, w.model): w for w in release}
    out: list[Writing] = []
    for _, item_id, model in read_judgments(path):
        writing = by_key.get((item_id, model))
        if writing is None:
            raise DataError(f"{path}: no release writing for item {item_id!r} by {model!r} (check --data)")
        out.append(writing)
    return list({(w.item_id, w.model): w for w in out}.values())


@dataclass
class Contexts:
    """Builds the `PerturbContext` of a writing from the items (when the benchmark is available)."""

    items: Mapping[str, Item] = field(default_factory=dict)
    _ids_by_language: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for item in sorted(self.items.values(), key=lambda i: i.id):
            if item.reference.strip():
                self._ids_by_language.setdefault(item.language, []).append(item.id)

    def __call__(self, writing: Writing) -> PerturbContext:
        item = self.items.get(writing.item_id)
        if item is None:
            return PerturbContext(language=detect_language(writing.output))
        return PerturbContext(language=item.language, reference=item.reference or None, pool=self.pool(item))

    def pool(self, item: Item) -> tuple[str, ...]:
        """References of other items in the same language, chosen by a stable hash of the item id."""
        others = [i for i in self._ids_by_language.get(item.language, []) if i != item.id]
        if not others:
            return ()
        start = sum(map(ord, item.id)) % len(others)
        picked = [others[(start + k * 97) % len(others)] for k in range(min(POOL_SIZE, len(others)))]
        return tuple(self.items[i].reference for i in dict.fromkeys(picked))


def writing_line(writing: Writing) -> str:
    """One JSONL line of a writing in the release layout (infer_id, model, output, extra fields)."""
    return json.dumps(writing.model_dump(by_alias=True, mode="json"), ensure_ascii=False) + "\n"


def write_writings(path: Path, writings: Sequence[Writing]) -> None:
    """Write writings as JSONL in the release layout, atomically (a file replaced whole)."""
    write_text_atomic(path, "".join(writing_line(w) for w in writings))


def failures_path(out: Path) -> Path:
    """Where failed perturbations of `out` are recorded (next to it: `<name>.failures.jsonl`)."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".failures.jsonl")


ContextFor = Callable[[Writing], PerturbContext]
