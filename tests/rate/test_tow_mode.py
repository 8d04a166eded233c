"""A ToW study: every leaf of the tree on its own scale with its criteria, plus an overall score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from markupsafe import escape
from rate_helpers import ClientFactory, put_rating, sign_in

from howtobench.judges.tree import default_tree
from howtobench.rate.export import agreement_table, export_study
from howtobench.rate.study import Study, StudySettings

GUIDE_LEAVES = {leaf.id: leaf for leaf in default_tree().leaves_for("guide")}


@pytest.fixture
def study_settings() -> StudySettings:
    return StudySettings(mode="tow")


def _full(overall: int, shift: int = 0) -> dict[str, object]:
    """Every guide leaf answered: the top of its scale minus `shift` steps, and the overall score."""
    return {"score": overall, "dims": {k: leaf.scale[-1 - shift] for k, leaf in GUIDE_LEAVES.items()}}


async def _item(client: TestClient[Any, Any]) -> str:
    page = await client.get("/rate")
    return str(page.url.path.rsplit("/", 1)[1])


async def test_the_page_shows_each_leaf_with_its_criteria_and_scale(clients: ClientFactory) -> None:
    client = await clients()
    await sign_in(client, "alice")
    page = await (await client.get(f"/rate/{await _item(client)}")).text()
    assert len(GUIDE_LEAVES) == 8  # content 4 + format 3 + impression 1 (the default tree, read through its API)
    for leaf in GUIDE_LEAVES.values():
        assert str(escape(leaf.criteria.en)) in page and str(escape(leaf.criteria.zh)) in page
        assert f'name="dim-{leaf.id}" value="{leaf.scale[-1]}"' in page
    assert 'name="score" value="10"' in page and "counts as a <strong>6</strong>" in page


async def test_leaf_answers_are_checked_against_their_own_scales(clients: ClientFactory, study: Study) -> None:
    client = await clients()
    csrf = await sign_in(client, "alice")
    item = await _item(client)
    for body, reason in [
        ({"dims": {"paragraphing": 5}}, "paragraphing 5 is not one of [1, 2, 3]"),
        ({"dims": {"plots": 0}}, "plots 0 is not one of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"),
        ({"dims": {"logic": 11}}, "logic 11 is not one of"),
        ({"dims": {"rhyme": 3}}, "'rhyme' is not a leaf rated for the guide task"),
        ({"score": 11}, "outside the scale 1-10"),
        ({"score": 5, "error_types": ["safety"]}, "belong to MetaEditor studies"),
    ]:
        refused = await put_rating(client, csrf, item, "A", body)
        assert refused.status == 422 and reason in (await refused.json())["error"], body
    assert study.store.ratings() == []
    partial = await put_rating(client, csrf, item, "A", {"dims": {"logic": 7}})
    assert (await partial.json())["rating"]["complete"] is False
    full = await put_rating(client, csrf, item, "A", _full(8))
    assert (await full.json())["rating"]["complete"] is True


async def test_export_maps_leaf_answers_to_leaf_scores(clients: ClientFactory, study: Study, tmp_path: Path) -> None:
    alice, bob = await clients(), await clients()
    alice_csrf, bob_csrf = await sign_in(alice, "alice"), await sign_in(bob, "bob")
    item = await _item(alice)
    assert await _item(bob) == item
    for letter, (a, b) in zip("ABC", [(9, 8), (6, 6), (3, 4)], strict=True):
        assert (await put_rating(alice, alice_csrf, item, letter, _full(a))).status == 200
        assert (await put_rating(bob, bob_csrf, item, letter, _full(b, shift=1))).status == 200
    summary = export_study(study, tmp_path / "tow.jsonl")
    assert summary.ratings == 6
    rows = [json.loads(line) for line in (tmp_path / "tow.jsonl").read_text(encoding="utf-8").splitlines()]
    alice_row = next(r for r in rows if r["rater"] == "alice")
    bob_row = next(r for r in rows if r["rater"] == "bob")
    # paragraphing answers 1-3 and is reported as the judge reports it: 5(x - 1).
    assert (alice_row["leaf_answers"]["paragraphing"], alice_row["dims"]["paragraphing"]) == (3, 10.0)
    assert (bob_row["leaf_answers"]["paragraphing"], bob_row["dims"]["paragraphing"]) == (2, 5.0)
    # plots answers 1-10 against the reference and is stepped as the judge steps it: 9 -> 10
    assert (bob_row["leaf_answers"]["plots"], bob_row["dims"]["plots"]) == (9, 10.0)
    assert bob_row["dims"]["logic"] == 9.0
    table = agreement_table(study)
    assert [row[0] for row in table.rows] == ["overall score", *sorted(GUIDE_LEAVES)]
