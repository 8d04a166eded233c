"""The paper's published Table 4 (ToW scores, GPT-4o judge) as reference values for leaderboards.

The numbers are transcribed in `paper_table4.yaml` (beside this module), whose header explains how the printed table was
read (task and All rows have no AVG value; genre rows start with one). Models are keyed by the release's
inference file names so a leaderboard of the shipped writings lines up with the paper column by column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

ALL_ROW = "all"


@dataclass(frozen=True)
class PaperTable:
    """Published scores: `values[(row, model)]`, rows being task ids, genre ids and `all`."""

    source: str
    judge: str
    models: tuple[str, ...]
    abbreviations: dict[str, str]
    values: dict[tuple[str, str], float]
    genre_avg: dict[str, float]
    items: dict[str, int] = field(default_factory=dict)
    """How many items of each task the published scores rest on (the whole benchmark)."""

    def get(self, row: str, model: str) -> float | None:
        return self.values.get((row, model))


@lru_cache(maxsize=1)
def paper_table4() -> PaperTable:
    """Load the transcribed Table 4 shipped with the package."""
    text = resources.files("howtobench.data").joinpath("paper_table4.yaml").read_text("utf-8")
    raw: dict[str, Any] = yaml.safe_load(text)
    models = tuple(m["key"] for m in raw["models"])
    values: dict[tuple[str, str], float] = {}
    rows: dict[str, list[float]] = dict(raw["tasks"])
    rows.update({gid: g["values"] for gid, g in raw["genres"].items()})
    rows[ALL_ROW] = raw["all"]
    for row, numbers in rows.items():
        if len(numbers) != len(models):
            raise ValueError(f"paper_table4.yaml: row {row!r} has {len(numbers)} values for {len(models)} models")
        values.update({(row, model): float(v) for model, v in zip(models, numbers, strict=True)})
    return PaperTable(
        source=str(raw["source"]),
        judge=str(raw["judge"]),
        models=models,
        abbreviations={m["key"]: m["paper"] for m in raw["models"]},
        values=values,
        genre_avg={gid: float(g["avg"]) for gid, g in raw["genres"].items()},
        items={task: int(n) for task, n in raw["items"].items()},
    )
