"""When the paper's published Table 4 may stand next to a leaderboard, where it goes, and how it is labelled.

The paper's columns are Tree-of-Writing root scores (1-10) over the whole benchmark, judged by GPT-4o. So they are
- shown only in a table of ToW scores: next to BLEU (0-100) or ROUGE (0-1) columns they would read as one scale;
- labelled "not comparable", with the reason in one line, when the table's items are a subset of the paper's (a
  subset has its own difficulty) or its judge is not GPT-4o (another judge grades on its own curve);
- placed in the order of the table: each reference column where its published All ranks it among the judged
  columns, so "ordered by All" is true of every column printed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from howtobench.data.paper import ALL_ROW, PaperTable

PAPER_METHOD = "tow"
Source = Literal["ours", "paper"]
_GPT_4O = re.compile(r"(?:[\w.-]+/)?gpt-4o(?:-\d{4}-\d{2}-\d{2})?")


def is_paper_judge(name: str | None) -> bool:
    """GPT-4o, the paper's judge: `gpt-4o` or a dated snapshot (`gpt-4o-2024-11-20`), with or without a provider
    prefix (`openai/gpt-4o`); not another model of the family (`gpt-4o-mini`)."""
    return name is not None and _GPT_4O.fullmatch(name.strip().lower()) is not None


@dataclass(frozen=True)
class PaperUse:
    """What becomes of the paper's columns on one leaderboard."""

    paper: PaperTable | None
    """The reference table shown (None: none was asked for, or it cannot be shown: `hidden` says why)."""
    caveat: str | None = None
    """Why the shown reference columns are not comparable with this table's (None: they are)."""
    hidden: str | None = None


def paper_use(paper: PaperTable | None, methods: Collection[str], judge_models: Collection[str | None],
              judged_items: Mapping[str, int]) -> PaperUse:
    """Decide how `paper` stands next to a leaderboard of `methods` judged by `judge_models` on `judged_items`
    (distinct items per task)."""
    if paper is None:
        return PaperUse(None)
    others = sorted(set(methods) - {PAPER_METHOD})
    if others:
        return PaperUse(None, hidden=(
            f"the paper's Table 4 columns are not shown: they are ToW scores (1-10), and this table also holds "
            f"{', '.join(others)}, on another scale"))
    reasons = [*_item_reasons(paper, judged_items), *_judge_reasons(paper, judge_models)]
    caveat = "not comparable with the paper's Table 4: " + "; ".join(reasons) if reasons else None
    return PaperUse(paper, caveat=caveat)


def _item_reasons(paper: PaperTable, judged_items: Mapping[str, int]) -> list[str]:
    total = sum(paper.items.values())
    judged = sum(min(judged_items.get(task, 0), n) for task, n in paper.items.items())
    if not total or judged >= total:
        return []
    return [f"{sum(judged_items.values()):,} items, a subset of its {total:,}"]


def _judge_reasons(paper: PaperTable, judge_models: Collection[str | None]) -> list[str]:
    names = sorted({name or "an unrecorded judge" for name in judge_models}) or ["an unrecorded judge"]
    if all(is_paper_judge(name) for name in judge_models) and judge_models:
        return []
    return [f"judged by {', '.join(names)}, not {paper.judge.replace('gpt', 'GPT')}"]


def display_order(columns: Sequence[str], order_scores: Mapping[str, float], paper: PaperTable | None,
                  interleave: bool) -> tuple[tuple[Source, str], ...]:
    """Every column printed, in order: the judged `columns` as ranked, with the paper's columns placed by their
    published All among them (`interleave`, the order by All means) or after them (another order)."""
    ours: list[tuple[Source, str]] = [("ours", col) for col in columns]
    if paper is None:
        return tuple(ours)
    theirs: list[tuple[Source, str]] = [("paper", m) for m in paper.models]
    if not interleave:
        return (*ours, *theirs)

    def value(entry: tuple[Source, str]) -> float:
        source, name = entry
        found = order_scores.get(name) if source == "ours" else paper.get(ALL_ROW, name)
        return float("-inf") if found is None else found

    merged: list[tuple[Source, str]] = []
    rest = list(theirs)
    for entry in ours:  # ours keep their order (ties and columns without a mean included); the paper's slot in
        while rest and value(rest[0]) > value(entry):
            merged.append(rest.pop(0))
        merged.append(entry)
    return (*merged, *rest)
