"""The report's judge-panel section: agreement between the panel's judges, the writings they disagree on most
(their reasons side by side) and a report card per judge — the tables of `analyze panel` / `analyze judge`,
shown when the judgments are a panel's (`judge --panel`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from howtobench.judges.base import EmptyConvention, Judgment
from howtobench.report.tables import Table

TOP = 10
CARD_BOOTSTRAP = 200  # the cards' intervals in the page; `analyze judge --bootstrap` for more


@dataclass(frozen=True)
class TableView:
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str]


def _view(table: Table) -> TableView:
    return TableView(table.title, list(table.columns), table.display_rows(), list(table.notes))


def panel_view(judgments: Sequence[Judgment], seed: int = 0, empty: EmptyConvention = "exclude"
               ) -> list[TableView] | None:
    """The section's tables (empty writings by the leaderboard's rule); None when no judgment is a panel's."""
    panel = [j for j in judgments if j.panel is not None]
    if not panel:
        return None
    # here, not at import: the meta modules pull in scipy (~1 s), which `run` and `judge` need not pay
    from howtobench.meta.judge_card import cards
    from howtobench.meta.panel_agreement import agreement_table, disagreements_table, panel_data

    data = panel_data(panel, empty)
    found = cards({Path("panel"): panel}, seed=seed, n_boot=CARD_BOOTSTRAP)
    return [_view(agreement_table(data)), _view(disagreements_table(data, TOP)), *(_view(c.table) for c in found)]
