"""Genre rubrics for the elaborated-rubric baseline, as data (`judges/rubrics/<genre>.yaml`).

One file per section of the paper's Appendix H (`appendix_h: H.n` names it): every dimension of the
section, in its order, and under each dimension every sub-criterion with the content of all its questions,
as a Chinese and an English label and description written in our own words. A judge picks the rubric of
the item's finest genre (`detail_genre_for(sub_task)`, e.g. 公文 -> official rather than its Table 4 row
"others"); a genre without a file (application and regulation, which Appendix H has no section for) uses
`others.yaml`, H.14's general-document rubric, and the judgment records which rubric was used.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from howtobench.data.genres import OTHERS, detail_genre_for
from howtobench.data.models import Item
from howtobench.errors import JudgeError
from howtobench.judges.tree import Name, Spec, Text

RUBRICS_DIR = Path(__file__).resolve().parents[1] / "rubrics"


class Criterion(Spec):
    """One named sub-criterion of a dimension: what the judge checks under it."""

    label: Text
    description: Text


class Dimension(Spec):
    """One rubric dimension the judge scores 1-10, judged by its sub-criteria."""

    id: Name
    label: Text
    criteria: tuple[Criterion, ...] = Field(min_length=1)

    def in_language(self, language: str) -> dict[str, Any]:
        """What the prompt template reads: the id, the label and every sub-criterion, in one language."""
        return {"id": self.id, "label": self.label.get(language),
                "criteria": [{"label": c.label.get(language), "description": c.description.get(language)}
                             for c in self.criteria]}


class Rubric(Spec):
    """The rubric of one genre."""

    genre: str
    appendix_h: str = Field(pattern=r"^H\.\d+$")
    dimensions: tuple[Dimension, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [d.id for d in self.dimensions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"rubric {self.genre}: dimension ids repeat: {ids}")
        return self

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the rubric: part of the prompt version, so edits invalidate the cache."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


@lru_cache(maxsize=64)
def load_rubric(genre: str, rubrics_dir: Path = RUBRICS_DIR) -> Rubric:
    """The rubric file of `genre`, validated; the genre named inside must match the file name."""
    path = rubrics_dir / f"{genre}.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        rubric = Rubric.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise JudgeError(f"rubric file {path}: {exc}") from exc
    if rubric.genre != genre:
        raise JudgeError(f"rubric file {path} declares genre {rubric.genre!r}, expected {genre!r}")
    return rubric


def rubric_genre(item: Item, rubrics_dir: Path = RUBRICS_DIR) -> str:
    """The genre whose rubric judges `item`: its finest genre if a file exists, else `others`."""
    genre = detail_genre_for(item.sub_task) if item.sub_task.strip() else item.genre
    if genre == OTHERS and item.genre != OTHERS:
        genre = item.genre  # an unknown label: trust the genre the loader assigned
    return genre if (rubrics_dir / f"{genre}.yaml").is_file() else OTHERS


def rubric_for(item: Item, rubrics_dir: Path = RUBRICS_DIR) -> Rubric:
    """The rubric that judges `item`."""
    return load_rubric(rubric_genre(item, rubrics_dir), rubrics_dir)
