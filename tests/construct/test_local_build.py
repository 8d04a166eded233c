"""End to end on the embedded local model (Gemma-3-270M): one short text through every build step.

The 270M model gives poor genres and scores; the point is that the pipeline runs on a real server: its
grammar-constrained JSON replies parse into a genre of the enum and a score of 1-5 (a failed call fails the
test), and the result is a benchmark the data loader reads. Kept to one text and two calls (classify, filter;
Completion needs no model) so it stays short on a loaded CI machine; back-construction on the local model is
exercised by the full seven-fixture build recorded in the issue report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from construct_helpers import FIXTURES

from howtobench.construct import classify, make, quality, review
from howtobench.construct.completion import BLANK
from howtobench.construct.ingest import ingest
from howtobench.construct.records import DraftItem, SourceText
from howtobench.construct.workfile import INGEST, ITEMS, read_stage
from howtobench.data.genres import GENRES
from howtobench.data.loader import load_items


@pytest.mark.local_model
async def test_build_one_text_on_local_model(tmp_path: Path) -> None:
    from howtobench.llm.client import open_client
    from howtobench.llm.local import local_endpoint

    build = tmp_path / "build"
    assert ingest([FIXTURES / "zh_prose_old_well.txt"], build, license="CC0").kept == 1
    async with local_endpoint() as endpoint, open_client(endpoint, workspace=tmp_path / "ws") as client:
        classified = await classify.classify(build, client)
        rows = classify.load_genres(build)
        assert classified.classified == 1 and classified.failed == 0, [r.error for r in rows.values()]
        assert all(r.genre in GENRES for r in rows.values())
        table = await quality.rate(build, client, threshold=1)
        assert table.kept == {"zh_prose_old_well.txt": 1}, table  # threshold 1: any valid score 1-5 keeps it
        assert sum(table.failed.values()) == 0
    report = await make.make(build, None, tasks=("completion",))
    assert report.made == {"completion": 1}
    item = next(iter(read_stage(build / ITEMS, DraftItem, "item_id").values()))
    assert item.information.replace(BLANK, item.reference) == next(iter(read_stage(
        build / INGEST, SourceText, "text_id").values())).text
    review.export_review(build)
    review.import_review(build, tmp_path / "bench")
    loaded = load_items(tmp_path / "bench")
    assert [(i.task, i.genre in GENRES) for i in loaded] == [("completion", True)]
