"""`--subset N --seed S`: stratified by task x genre, seeded, in file order; `--limit` is left as it was."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.genres import TABLE4_GENRES
from howtobench.data.loader import load_items, select_items
from howtobench.data.subset import stratified_subset
from howtobench.errors import DataError


def test_24_items_cover_every_genre_and_task(bench_root: Path) -> None:
    items = load_items(bench_root)
    subset = select_items(items, subset=24, seed=0)
    assert len(subset) == 24 and {it.genre for it in subset} == set(TABLE4_GENRES)
    tasks = Counter(it.task for it in subset)
    assert set(tasks) == {"completion", "guide", "open"} and max(tasks.values()) - min(tasks.values()) <= 3
    order = {it.id: k for k, it in enumerate(items)}
    assert [order[it.id] for it in subset] == sorted(order[it.id] for it in subset)  # file order
    assert len({it.genre for it in select_items(items, limit=8)}) < 12  # what --limit covers, for contrast


def test_same_seed_same_items_other_seed_other_items(bench_root: Path) -> None:
    items = load_items(bench_root)
    ids = [it.id for it in stratified_subset(items, 24, seed=7)]
    assert ids == [it.id for it in stratified_subset(items, 24, seed=7)]
    assert ids != [it.id for it in stratified_subset(items, 24, seed=8)]


def test_larger_subsets_follow_the_benchmark_mix(bench_root: Path) -> None:
    items = load_items(bench_root)
    subset = stratified_subset(items, 400, seed=1)
    full, got = Counter(it.genre for it in items), Counter(it.genre for it in subset)
    for genre, n in full.items():  # each genre within one item (plus its coverage draw) of its proportional share
        assert abs(got[genre] - n * 400 / len(items)) <= 2, genre
    assert stratified_subset(items[:5], 50) == list(items[:5])


def test_limit_and_subset_together_are_refused(bench_root: Path) -> None:
    with pytest.raises(DataError, match="not both"):
        select_items(load_items(bench_root), limit=2, subset=3)


def test_judge_cli_subset(bench_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "rouge.jsonl"
    args = ["judge", "--method", "rouge", "--data", str(bench_root), "--subset", "24", "--seed", "5",
            "--models", "deepseek-r1", "-o", str(out), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = {it.id for it in stratified_subset(load_items(bench_root), 24, seed=5)}
    assert {r["item_id"] for r in rows} == expected and {r["genre"] for r in rows} == set(TABLE4_GENRES)
