"""Writing genres and the mapping from the release's `sub_task` labels onto them.

The mapping is data (`genres.yaml`, next to this file) so it can be read, argued with and extended without
touching code; every choice carries its reason there. `genre_for` gives the Table 4 row a label is reported
under (what leaderboards group by); `detail_genre_for` gives the finest genre the paper defines (what a
genre-specific rubric can key on). An unknown label maps to `others` and warns once, so user data with new
labels still loads but the gap is visible.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

OTHERS = "others"


class UnknownGenreWarning(UserWarning):
    """A `sub_task` label that the genre mapping does not know; it was counted as `others`."""


@dataclass(frozen=True)
class Genre:
    """One writing genre: English id, Chinese and English labels, and the Table 4 row it is reported under."""

    id: str
    zh: str
    en: str
    reported_as: str

    @property
    def is_table_row(self) -> bool:
        """True for the twelve genres that are rows of the paper's Table 4."""
        return self.reported_as == self.id


@dataclass(frozen=True)
class LabelMapping:
    """Where one release `sub_task` label goes, and why."""

    label: str
    genre: str
    detail: str
    why: str


@lru_cache(maxsize=1)
def _load() -> tuple[dict[str, Genre], dict[str, LabelMapping]]:
    raw: dict[str, Any] = yaml.safe_load(resources.files("howtobench.data").joinpath("genres.yaml").read_text("utf-8"))
    genres = {
        gid: Genre(id=gid, zh=g["zh"], en=g["en"], reported_as=g["reported_as"]) for gid, g in raw["genres"].items()
    }
    labels = {
        label: LabelMapping(label=label, genre=m["genre"], detail=m["detail"], why=" ".join(str(m["why"]).split()))
        for label, m in raw["labels"].items()
    }
    _check(genres, labels)
    return genres, labels


def _check(genres: dict[str, Genre], labels: dict[str, LabelMapping]) -> None:
    """Fail loudly at import if the YAML points at a genre it does not define."""
    for g in genres.values():
        if g.reported_as not in genres or not genres[g.reported_as].is_table_row:
            raise ValueError(f"genres.yaml: genre {g.id!r} is reported as {g.reported_as!r}, not a Table 4 row")
    for m in labels.values():
        if m.genre not in genres or not genres[m.genre].is_table_row:
            raise ValueError(f"genres.yaml: label {m.label!r} maps to {m.genre!r}, not a Table 4 row")
        if m.detail not in genres or genres[m.detail].reported_as != m.genre:
            raise ValueError(f"genres.yaml: label {m.label!r} has detail {m.detail!r} inconsistent with {m.genre!r}")


GENRES: dict[str, Genre] = _load()[0]
LABELS: dict[str, LabelMapping] = _load()[1]
TABLE4_GENRES: tuple[str, ...] = tuple(g.id for g in GENRES.values() if g.is_table_row)

_warned: set[str] = set()


def is_known_label(sub_task: str) -> bool:
    """True when `sub_task` is a release label, a genre id or a genre's Chinese label."""
    return _lookup(sub_task) is not None


def genre_for(sub_task: str, *, warn: bool = True) -> str:
    """The Table 4 genre id for a `sub_task` label; unknown labels give `others` (warned once per label)."""
    found = _lookup(sub_task)
    if found is not None:
        return GENRES[found].reported_as
    if warn and sub_task not in _warned:
        _warned.add(sub_task)
        warnings.warn(
            f"unknown sub_task label {sub_task!r}: counted as genre 'others' "
            "(add it to howtobench/data/genres.yaml to map it)",
            UnknownGenreWarning,
            stacklevel=2,
        )
    return OTHERS


def detail_genre_for(sub_task: str) -> str:
    """The finest genre id the paper defines for a label (e.g. 公文 -> official); `others` if unknown."""
    return _lookup(sub_task) or OTHERS


def _lookup(sub_task: str) -> str | None:
    """Release label first, then an English genre id, then a genre's Chinese label."""
    key = sub_task.strip()
    if key in LABELS:
        return LABELS[key].detail
    if key.lower() in GENRES:
        return key.lower()
    return _by_zh().get(key)


def genre_id(name: str) -> str | None:
    """The genre id a user means: an id (`letters`, any case) or a genre's Chinese label (`书信`); None if neither."""
    key = name.strip()
    return key.lower() if key.lower() in GENRES else _by_zh().get(key)


@lru_cache(maxsize=1)
def _by_zh() -> dict[str, str]:
    return {g.zh: g.id for g in GENRES.values()}
