"""Every genre of the data mapping has a valid bilingual rubric file; items find the rubric of their finest genre."""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.data.genres import GENRES
from howtobench.data.models import Item
from howtobench.errors import JudgeError
from howtobench.judges.baselines.rubric_files import RUBRICS_DIR, load_rubric, rubric_for, rubric_genre


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_every_genre_has_a_bilingual_rubric(genre: str) -> None:
    rubric = load_rubric(genre)
    assert rubric.genre == genre
    assert 4 <= len(rubric.dimensions) <= 6
    for dim in rubric.dimensions:
        assert dim.label.zh and dim.label.en and len(dim.description.zh) > 15 and len(dim.description.en) > 30


def test_no_rubric_file_without_a_genre() -> None:
    assert {p.stem for p in RUBRICS_DIR.glob("*.yaml")} == set(GENRES)


def _item(sub_task: str, genre: str = "others") -> Item:
    return Item(infer_id="x", task_type="open", sub_task=sub_task, genre=genre, basic_instruction="写")


def test_items_use_their_finest_genre_and_fall_back_to_others() -> None:
    assert rubric_genre(_item("公文")) == "official"  # reported under "others" in Table 4, own rubric
    assert rubric_genre(_item("纪实", "prose")) == "documentary"
    assert rubric_genre(_item("小说", "fiction")) == "fiction"
    assert rubric_genre(_item("", "letters")) == "letters"
    assert rubric_for(_item("介绍说明")).genre == "others"


def test_bad_rubric_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "poem.yaml").write_text("genre: poem\ndimensions: []\n", encoding="utf-8")
    with pytest.raises(JudgeError, match="poem.yaml"):
        load_rubric("poem", tmp_path)
    (tmp_path / "fiction.yaml").write_text((RUBRICS_DIR / "poem.yaml").read_text("utf-8"), encoding="utf-8")
    with pytest.raises(JudgeError, match="declares genre 'poem'"):
        load_rubric("fiction", tmp_path)
