"""The judgment explorer of the HTML report: per item, the instruction, each model's writing and every leaf.

A reader who doubts a number should be able to open the item and see why: the instruction, the writing, each
leaf's score with the judge's reason, and, for a failure, the failure itself (error and the judge's raw reply),
never a made-up value. Pages stay small by showing at most `limit` items; the items with a failed or empty
judgment come first, since those are the ones worth a look. All text here is untrusted model or user text
and is kept raw: the template escapes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from howtobench.data.models import TASKS, Item
from howtobench.judges.base import Judgment, LeafResult, SampleResult
from howtobench.report.html_views import column_of, latest_judgments
from howtobench.report.leaderboard import Leaderboard
from howtobench.report.render import fmt

DEFAULT_LIMIT = 60
MAX_DETAILS = 12


@dataclass(frozen=True)
class LeafView:
    name: str
    node: str
    score: str
    raw_score: str
    status: str
    reason: str
    error: str
    raw_text: str


@dataclass(frozen=True)
class EntryView:
    """One model's judgment of one item, with its writing when the text is available."""

    column: str
    score: str
    status: str
    nodes: list[tuple[str, str]]
    weights: list[tuple[str, str]]
    leaves: list[LeafView]
    failures: list[str]
    writing: str | None
    judge_model: str
    details: list[tuple[str, str]]
    samples: list[str]


@dataclass(frozen=True)
class ItemView:
    task: str
    genre: str
    item_id: str
    instruction: str | None
    information: str | None
    reference: str | None
    entries: list[EntryView]

    @property
    def has_problem(self) -> bool:
        return any(e.status in ("failed", "empty") for e in self.entries)


@dataclass(frozen=True)
class ExplorerView:
    items: list[ItemView]
    total: int
    writings_found: int


def _natural(text: str) -> tuple[object, ...]:
    """'infer_12' before 'infer_100'."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def _item_key(key: tuple[str, str]) -> tuple[object, ...]:
    task, item_id = key
    return (TASKS.index(task) if task in TASKS else len(TASKS), task, _natural(item_id))


def choose_items(judgments: Sequence[Judgment], limit: int) -> tuple[list[tuple[str, str]], int]:
    """(task, item id) pairs to show — problem items first, then benchmark order — and how many there are."""
    problem: set[tuple[str, str]] = set()
    keys: set[tuple[str, str]] = set()
    for j in judgments:
        keys.add((j.task, j.item_id))
        if j.status in ("failed", "empty") or j.score is None:
            problem.add((j.task, j.item_id))
    ordered = sorted(keys, key=lambda k: (k not in problem, _item_key(k)))
    return (ordered if limit <= 0 else ordered[:limit]), len(keys)


def _leaf_view(leaf: LeafResult) -> LeafView:
    raw = "" if leaf.raw_score is None or leaf.raw_score == leaf.score else fmt(leaf.raw_score)
    return LeafView(
        name=leaf.name,
        node=leaf.node or "",
        score=fmt(leaf.score),
        raw_score=raw,
        status=leaf.status,
        reason=leaf.reason or "",
        error=leaf.error or "",
        raw_text=leaf.raw_text or "",
    )


def _details(meta: Mapping[str, object]) -> list[tuple[str, str]]:
    """The scalar fields of a judgment's `meta` (e.g. ROUGE's precision, recall, lengths), floats to 3 places."""
    out = []
    for key, value in list(meta.items())[:MAX_DETAILS]:
        if isinstance(value, float):
            out.append((key, f"{value:.3f}"))
        elif isinstance(value, (str, int, bool)):
            out.append((key, str(value)))
    return out


def _entry(j: Judgment, column: str, writing: str | None) -> EntryView:
    return EntryView(
        column=column,
        score=fmt(j.score),
        status=j.status if j.score is not None or j.status != "ok" else "failed",
        nodes=[(name, fmt(v)) for name, v in j.nodes.items()],
        weights=[(name, f"{w:+.2f}") for name, w in j.weights.items()],
        leaves=[_leaf_view(leaf) for leaf in j.leaves],
        failures=list(j.failures),
        writing=writing,
        judge_model=j.judge_model or "",
        details=_details(j.meta),
        samples=[_sample_text(s) for s in j.samples] if len(j.samples) > 1 else [],
    )


def _sample_text(sample: SampleResult) -> str:
    """One self-consistency / weight sample: its score, status and (ToW) its own node scores."""
    nodes = ", ".join(f"{name} {fmt(v)}" for name, v in sample.nodes.items())
    return f"#{sample.index}: {fmt(sample.score)} ({sample.status})" + (f" [{nodes}]" if nodes else "")


def explorer(
    lb: Leaderboard,
    judgments: Sequence[Judgment],
    *,
    items: Mapping[str, Item],
    writings: Mapping[tuple[str, str], str],
    limit: int = DEFAULT_LIMIT,
) -> ExplorerView:
    """Item views for the chosen items; each lists the models in leaderboard order."""
    latest = latest_judgments(judgments)
    chosen, total = choose_items(list(latest.values()), limit)
    columns = column_of(lb)
    order = {c: k for k, c in enumerate(lb.columns)}
    by_item: dict[tuple[str, str], list[EntryView]] = {k: [] for k in chosen}
    for j in latest.values():
        entries = by_item.get((j.task, j.item_id))
        column = columns.get((j.model, j.method))
        if entries is not None and column is not None:
            entries.append(_entry(j, column, writings.get((j.item_id, j.model))))
    genre_of = {(j.task, j.item_id): j.genre for j in latest.values()}
    views = []
    for task, item_id in chosen:
        item = items.get(item_id)
        genre = item.genre if item else genre_of[(task, item_id)]
        entries = sorted(by_item[(task, item_id)], key=lambda e: order.get(e.column, len(order)))
        views.append(ItemView(task, genre, item_id, item.instruction if item else None,
                              item.information if item else None, item.reference if item else None, entries))
    found = sum(e.writing is not None for v in views for e in v.entries)
    return ExplorerView(items=views, total=total, writings_found=found)
