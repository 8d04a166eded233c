"""What the guard's rules would do to a set of writings: `howtobench guard` and `bench/guard.py`.

Writings files are checked afresh (their items give the reference and the language); judgments files are read
from the signals the guard recorded on them (`--guard flag|skip`), with today's rules, so thresholds can be tuned
on past runs without the texts. The tables: each rule's count over everything, each signal's distribution, and
each rule's count per model and task - what a user needs to set thresholds on their own data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from howtobench.data.loader import load_writings_file
from howtobench.data.models import Item
from howtobench.document import Table
from howtobench.guard.guard import Guard, guard_record
from howtobench.guard.rules import Rule
from howtobench.guard.signals import NAMES, Signals
from howtobench.meta.judgments import load_judgments

QUANTILES = (0.01, 0.05, 0.5, 0.95, 0.99)


@dataclass
class Survey:
    """The signals and rule hits of every writing seen, keyed by (model, task)."""

    rules: tuple[Rule, ...]
    signals: list[Signals] = field(default_factory=list)
    groups: list[tuple[str, str]] = field(default_factory=list)
    hits: list[tuple[str, ...]] = field(default_factory=list)
    unguarded: int = 0  # judgments without a guard record

    def add(self, model: str, task: str, s: Signals) -> None:
        self.signals.append(s)
        self.groups.append((model, task))
        self.hits.append(tuple(r.name for r in self.rules if r.flags(s)))

    def skipped(self, hits: Iterable[str]) -> bool:
        skipping = {r.name for r in self.rules if r.skip}
        return any(name in skipping for name in hits)


def survey_writings(paths: Iterable[Path], items: Mapping[str, Item], guard: Guard, into: Survey) -> None:
    """Check every writing of `paths` (release layout: infer_id, model, output) against its item."""
    for path in paths:
        for writing in load_writings_file(path, items, strict=True):
            item = items[writing.item_id]
            into.add(writing.model, item.task, guard.check(item, writing.output).signals)


def survey_judgments(path: Path, into: Survey) -> None:
    for judgment in load_judgments(path, strict=True):
        record = guard_record(judgment)
        if record is None or "signals" not in record:
            into.unguarded += 1
            continue
        into.add(judgment.model, judgment.task, Signals(**record["signals"]))


def rule_table(s: Survey) -> Table:
    n = len(s.signals)
    counts = Counter(name for hits in s.hits for name in hits)
    table = Table("Guard rules: writings each would flag", ["rule", "signal", "threshold", "action", "flagged",
                                                            "share %"], digits=3)
    for r in s.rules:
        table.add_row(r.name, r.signal, f"{'<' if r.below else '>='} {r.threshold:g}", "skip" if r.skip else "flag",
                      counts[r.name], 100 * counts[r.name] / n if n else None)
    skipped = sum(s.skipped(h) for h in s.hits)
    table.notes.append(f"{n:,} writings; `--guard skip` would skip {skipped:,} ({100 * skipped / n:.2f} %)" if n
                       else "no writings")
    if s.unguarded:
        table.notes.append(f"{s.unguarded:,} judgments carry no guard signals (judged without --guard) and are left "
                           "out")
    return table


def signal_table(s: Survey) -> Table:
    table = Table("Guard signals: distribution", ["signal", "n", *[f"p{100 * q:g}" for q in QUANTILES], "max"],
                  digits=3)
    for name in NAMES:
        values = sorted(float(v) for v in (getattr(x, name) for x in s.signals) if v is not None)
        if not values:
            table.add_row(name, 0, *[None] * (len(QUANTILES) + 1))
            continue
        table.add_row(name, len(values), *[values[min(len(values) - 1, int(q * len(values)))] for q in QUANTILES],
                      values[-1])
    return table


def group_table(s: Survey) -> Table:
    table = Table("Guard rules per model and task", ["model", "task", "writings", "would skip",
                                                     *[r.name for r in s.rules]], digits=0)
    by_group: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for group, hits in zip(s.groups, s.hits, strict=True):
        by_group.setdefault(group, []).append(hits)
    for (model, task), hits_list in sorted(by_group.items()):
        counts = Counter(name for hits in hits_list for name in hits)
        table.add_row(model, task, len(hits_list), sum(s.skipped(h) for h in hits_list),
                      *[counts[r.name] for r in s.rules])
    return table


def survey_tables(s: Survey) -> list[Table]:
    return [rule_table(s), signal_table(s), group_table(s)]
