"""HoWToBench items as inspect samples: the prompt `howtobench generate` sends, and what the judges need.

The input is built by `generate.build_request` — the very messages our generator sends for the item (system
prompt when set, then the task's user prompt) — so a model's writings from `inspect eval` and from
`howtobench generate` answer the same prompt. The target is the human reference; the metadata carries the
item (id, task, genre, instruction, information, reference, language) so a scorer rebuilds the `Item`
without reading the benchmark again, and inspect's grouped metrics can split by task or genre.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, select_items
from howtobench.data.models import Item
from howtobench.errors import DataError
from howtobench.generate import GenerateSettings, build_request
from howtobench.inspect_eval.client import to_inspect_messages

ITEM_FIELDS: tuple[str, ...] = ("item_id", "task", "genre", "sub_task", "bench_id", "language",
                                "instruction", "information", "reference")


def item_metadata(item: Item) -> dict[str, Any]:
    """What a scorer needs to rebuild the item, under flat keys (inspect shows them, grouped metrics use them)."""
    return {
        "item_id": item.id, "task": item.task, "genre": item.genre, "sub_task": item.sub_task,
        "bench_id": item.bench_id, "language": item.language, "instruction": item.instruction,
        "information": item.information, "reference": item.reference,
    }


def item_from_metadata(metadata: dict[str, Any]) -> Item:
    """The `Item` a sample was built from (the inverse of `item_metadata`)."""
    missing = [k for k in ITEM_FIELDS if k not in metadata]
    if missing:
        raise DataError(f"sample metadata lacks {missing}: was the sample built by howtobench's dataset?")
    return Item(infer_id=metadata["item_id"], task_type=metadata["task"], genre=metadata["genre"],
                sub_task=metadata["sub_task"], bench_id=metadata["bench_id"], language=metadata["language"],
                basic_instruction=metadata["instruction"], information=metadata["information"],
                reference=metadata["reference"])


def item_sample(item: Item, settings: GenerateSettings) -> Sample:
    request = build_request(item, settings)
    return Sample(id=item.id, input=to_inspect_messages(request.messages), target=item.reference,
                  metadata=item_metadata(item))


def split_arg(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """A task argument given once (`-T genre=poem`), comma-separated (`poem,prose`) or as a list."""
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    cleaned = tuple(p.strip() for p in parts if p.strip())
    return cleaned or None


def howtobench_dataset(
    *,
    tasks: Iterable[str] | None = None,
    genres: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
    limit: int | None = None,
    data: Path | None = None,
    settings: GenerateSettings | None = None,
) -> MemoryDataset:
    """The selected items (the filters of `howtobench generate`: task, genre, ids, first `limit` per task)."""
    root = resolve_data_dir(data)
    task_list = tuple(tasks) if tasks else None
    items = select_items(load_items(root, task_list), task_list, genres, limit, ids)
    if not items:
        raise DataError("the filters select no HoWToBench item")
    chosen = settings or GenerateSettings()
    return MemoryDataset([item_sample(it, chosen) for it in items], name="howtobench", location=str(root))
