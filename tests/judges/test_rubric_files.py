"""Rubric files carry Appendix H as it stands (read from the paper at test time); items find the rubric of their
finest genre."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from howtobench.data.genres import GENRES
from howtobench.data.models import Item
from howtobench.errors import JudgeError
from howtobench.judges.baselines.rubric_files import RUBRICS_DIR, load_rubric, rubric_for, rubric_genre

NO_SECTION = {"application", "regulation"}  # Appendix H has no section for them: they use H.14 (others.yaml)
SECTION_OF = {"argumentative": "H.1", "summary": "H.2", "contract": "H.3", "delivery": "H.4", "documentary": "H.5",
              "comment": "H.6", "fiction": "H.7", "letters": "H.8", "official": "H.9", "plan": "H.10",
              "poem": "H.11", "prose": "H.12", "report": "H.13", "others": "H.14", "speech": "H.15",
              "application": "H.14", "regulation": "H.14"}

_WORD = r"[A-Z][\w’'-]*"
_NAME = rf"{_WORD}(?: (?:{_WORD}|of|and|the|in|for|to|with))*"
_CRITERION = re.compile(rf"(?:^|(?<=[?.] ))({_NAME}) ?: ")


def appendix_h(paper: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """Section number -> its dimensions in order, each with its sub-criteria names.

    A dimension is a line "n. Title" followed by one paragraph. Its sub-criteria are the "Name : question"
    parts of that paragraph; where a section names none (H.5, H.8, H.9), every question is one criterion.
    """
    text = paper.read_text(encoding="utf-8")
    body = text[text.index("## Appendix H "):text.index("## Appendix I ")]
    parts = re.split(r"^### (H\.\d+) .+$", body, flags=re.M)
    sections = {}
    for number, content in zip(parts[1::2], parts[2::2], strict=True):
        dims = []
        for title, paragraph in re.findall(r"^\d+\. (.+)\n\n(.+)$", content, flags=re.M):
            names = _CRITERION.findall(paragraph)
            dims.append((title, names or [f"question {k + 1}" for k in range(paragraph.count("?"))]))
        sections[number] = dims
    return sections


def test_the_parser_reads_all_fifteen_sections(paper_path: Path) -> None:
    sections = appendix_h(paper_path)
    assert sorted(sections, key=lambda s: int(s[2:])) == [f"H.{k}" for k in range(1, 16)]
    first = ("Clarity of the Theme and Argument", ["Clarity of the Theme", "Logic of the Argument"])
    assert sections["H.1"][0] == first
    assert [len(c) for _, c in sections["H.7"]] == [3, 3, 3, 3, 2, 2]
    assert [len(c) for _, c in sections["H.9"]] == [4, 4, 4, 4, 4]  # unnamed: one criterion per question
    assert sections["H.11"][4][1] == ["Artistic Effect and Interpretative Space", "Impact and Intellectual Provocation"]


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_every_genre_carries_its_appendix_h_section(genre: str, paper_path: Path) -> None:
    rubric = rubric_for(_item(GENRES[genre].zh))
    assert rubric.appendix_h == SECTION_OF[genre]
    section = appendix_h(paper_path)[rubric.appendix_h]
    assert len(rubric.dimensions) == len(section), [t for t, _ in section]
    for dim, (title, names) in zip(rubric.dimensions, section, strict=True):
        assert len(dim.criteria) == len(names), f"{genre}/{dim.id} vs {title!r}: {names}"
        for crit in dim.criteria:
            assert crit.label.zh and crit.label.en and len(crit.description.zh) > 5 and len(crit.description.en) > 15


def test_one_file_per_appendix_h_section() -> None:
    files = {p.stem for p in RUBRICS_DIR.glob("*.yaml")}
    assert files == set(GENRES) - NO_SECTION
    assert sorted(load_rubric(g).appendix_h for g in files) == sorted(f"H.{k}" for k in range(1, 16))


def _item(sub_task: str, genre: str = "others") -> Item:
    return Item(infer_id="x", task_type="open", sub_task=sub_task, genre=genre, basic_instruction="写")


def test_items_use_their_finest_genre_and_fall_back_to_others() -> None:
    assert rubric_genre(_item("公文")) == "official"  # reported under "others" in Table 4, own rubric
    assert rubric_genre(_item("纪实", "prose")) == "documentary"
    assert rubric_genre(_item("小说", "fiction")) == "fiction"
    assert rubric_genre(_item("", "letters")) == "letters"
    assert rubric_for(_item("介绍说明")).genre == "others"
    assert rubric_genre(_item("规章制度", "regulation")) == "others"  # no Appendix H section: H.14's rubric
    assert rubric_genre(_item("申请")) == "others"


def test_bad_rubric_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "poem.yaml").write_text("genre: poem\nappendix_h: H.11\ndimensions: []\n", encoding="utf-8")
    with pytest.raises(JudgeError, match="poem.yaml"):
        load_rubric("poem", tmp_path)
    (tmp_path / "fiction.yaml").write_text((RUBRICS_DIR / "poem.yaml").read_text("utf-8"), encoding="utf-8")
    with pytest.raises(JudgeError, match="declares genre 'poem'"):
        load_rubric("fiction", tmp_path)
    no_criteria = "genre: prose\nappendix_h: H.12\ndimensions:\n" + "".join(
        f"  - {{id: d{k}, label: {{zh: 维度, en: dim}}, criteria: []}}\n" for k in range(2))
    (tmp_path / "prose.yaml").write_text(no_criteria, encoding="utf-8")
    with pytest.raises(JudgeError, match="prose.yaml"):
        load_rubric("prose", tmp_path)
