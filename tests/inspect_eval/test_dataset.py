"""HoWToBench items as inspect samples: the prompts of `howtobench generate`, the filters, the metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra installs inspect_ai")

from howtobench.data.loader import load_items, select_items
from howtobench.errors import DataError
from howtobench.generate import GenerateSettings, build_request
from howtobench.inspect_eval.dataset import howtobench_dataset, item_from_metadata, split_arg


def test_samples_carry_the_generate_prompt_and_the_item(bench_root: Path) -> None:
    settings = GenerateSettings(system_prompt="你是作家。")
    dataset = howtobench_dataset(tasks=["guide", "completion"], limit=2, data=bench_root, settings=settings)
    items = select_items(load_items(bench_root, ("guide", "completion")), ("guide", "completion"), None, 2)
    assert [s.id for s in dataset] == [it.id for it in items] and len(items) == 4
    for sample, item in zip(dataset, items, strict=True):
        sent = build_request(item, settings).messages
        assert [(m.role, m.text) for m in sample.input] == [(m["role"], m["content"]) for m in sent]
        assert sample.target == item.reference
        assert sample.metadata is not None
        assert (sample.metadata["item_id"], sample.metadata["genre"], sample.metadata["reference"]) == (
            item.id, item.genre, item.reference)
        assert item_from_metadata(sample.metadata) == item


def test_genre_and_id_filters(bench_root: Path) -> None:
    poems = howtobench_dataset(tasks=["open"], genres=["poem"], data=bench_root)
    assert len(poems) > 0 and {s.metadata["genre"] for s in poems if s.metadata} == {"poem"}
    every = load_items(bench_root, ("open",))
    assert len(poems) == sum(it.genre == "poem" for it in every)
    picked = [every[3].id, every[7].id]
    assert [s.id for s in howtobench_dataset(ids=picked, data=bench_root)] == picked


def test_empty_selection_and_unknown_genre_fail_loud(bench_root: Path) -> None:
    with pytest.raises(DataError, match="unknown genre"):
        howtobench_dataset(genres=["sonnets"], data=bench_root)
    with pytest.raises(DataError, match="select no"):
        howtobench_dataset(tasks=["completion"], genres=["contract"], limit=0, data=bench_root)


def test_split_arg() -> None:
    assert split_arg("poem, prose,") == ("poem", "prose")
    assert split_arg(["guide"]) == ("guide",)
    assert split_arg(None) is None and split_arg(" ") is None
