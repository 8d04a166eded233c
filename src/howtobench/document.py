"""One table model shared by every report, and the document the leaderboard is (rendered by report.formats,
through report.tables). It imports nothing of the project, so the analyses that build tables (meta, robustness,
rate) stand below report, which renders them.

Analyses build a `Table` of plain values (str, int, float, None) and hand it to `render` or `print_tables`; the
leaderboard builds a `Document` of Tables and lines (report.render). No analysis formats numbers itself and no
command renders a table itself: every `--format` is one module of report.formats, so every command's formats
behave alike and a new format is one file. JSON keeps the raw values (floats unrounded, None as null) so scripts
never parse display strings; the other formats round floats to `Table.digits` and show None as `-`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Cell = Any


@dataclass(frozen=True)
class Turn:
    """How the terminal shows a table too wide for it (report.fit): `label` is added to the title of the table
    turned (None: never turned, its rows already are the models or pairs), `corner` heads the turned table's first
    column, `labels` leading columns name the rows (None: counted from the values, see `label_columns`)."""

    label: str | None = "turned to fit the terminal"
    corner: str = ""
    labels: int | None = None


@dataclass
class Table:
    """A titled grid of values with optional footnotes (e.g. significance marks explained)."""

    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int | None = 2
    formats: dict[str, str] = field(default_factory=dict)
    """Per-column format spec for floats in display formats (e.g. {"p": ".1e"}); JSON stays raw."""
    turn: Turn = Turn()
    look: Literal["plain", "board"] = "plain"
    """The terminal look: plain (centred title, numbers right-aligned, notes as caption) or board (the leaderboard's:
    title left, bold header, the first column left and the others right)."""
    dim_marker: str | None = None
    """In the terminal, columns and cells whose text holds this are dim (the paper's reference values)."""

    def add_row(self, *cells: Cell) -> None:
        """Append one row; its length must match the columns (caught here, not in a renderer)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"row has {len(cells)} cells, table {self.title!r} has {len(self.columns)} columns")
        self.rows.append(list(cells))

    def display_rows(self) -> list[list[str]]:
        """Rows as display text: floats in their column's format, else rounded to `digits`."""
        specs = [self.formats.get(col) for col in self.columns]
        return [[format_cell(v, self.digits, spec) for v, spec in zip(row, specs, strict=True)] for row in self.rows]

    def records(self) -> list[dict[str, Cell]]:
        """Rows as dicts keyed by column name (the JSON shape)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def format_cell(value: Cell, digits: int | None = 2, spec: str | None = None) -> str:
    """Display text of one value: floats rounded (or in `spec`), None and NaN as '-'; `digits` None shows values
    as they are and None as blank (a long-form export such as the leaderboard's cell records)."""
    if digits is None:
        return "" if value is None else str(value)
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else format(value, spec or f".{digits}f")
    return str(value)


NUMBER = re.compile(r"[=+\-−]?\d[\d.,]*(?:e[+-]?\d+)?%?(?:\s*\[[^\]]*\])?[^\w\s]*")
"""Display text that reads as a number: "0.93 [0.85, 0.97]", "=6.10 [5.9, 6.3]▲*", "1.2e-05", "12.5%" (not a run id
such as 20260101T100000Z-ab12cd)."""
BLANKS = ("-", "—", "")


def numeric_column(cells: list[str]) -> bool:
    """A column of numbers (blanks aside) is right-aligned; decided on the text, so it holds once turned too."""
    shown = [c for c in cells if c not in BLANKS]
    return bool(shown) and all(NUMBER.fullmatch(c.strip()) for c in shown)


def _holds_numbers(table: Table, k: int, shown: list[list[str]]) -> bool:
    """Numbers as values, or as text that reads as numbers (an analysis that formatted its own, as robustness's
    "6.12"); a run id such as 20260101T100000Z-ab12cd is a label."""
    raw = any(isinstance(row[k], (int, float)) and not isinstance(row[k], bool) for row in table.rows)
    return raw or numeric_column([row[k] for row in shown])


def label_columns(table: Table) -> int:
    """How many leading columns name the rows (those before the first column of numbers, e.g. run and purpose; at
    least one, and one column is always left to show): repeated in every part, the column headers once turned."""
    shown = table.display_rows()
    first = next((k for k in range(len(table.columns)) if _holds_numbers(table, k, shown)), len(table.columns))
    return max(1, min(first, len(table.columns) - 1))


@dataclass(frozen=True)
class Paragraph:
    """Lines of a document between its tables (the leaderboard's order line, the paper's caveats); `code` lines are
    identifiers (the signature), shown as code where a format can."""

    lines: list[str]
    code: bool = False


Block = Table | Paragraph


@dataclass
class Document:
    """What a command prints: titled tables and lines, in order, with what sits around them.

    A document with a `title` (the leaderboard) is one piece: its formats write it whole, its tables as sections;
    one without is a list of tables each shown on its own (every other command). `notes` open it, `headline` is
    the answer (first in a file, last in the terminal: where a reader sees it without scrolling), `warnings` follow
    the tables, `footer` closes it. `long_form` is the one table CSV writes instead of the shown ones (the
    leaderboard's cell records); `data`, when set, is the JSON document instead of the tables' records (the
    leaderboard's own shape, which scripts read: report.render.to_json_data)."""

    blocks: list[Block]
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    footer: list[Paragraph] = field(default_factory=list)
    long_form: Table | None = None
    data: dict[str, Any] | list[Any] | None = None

    @property
    def tables(self) -> list[Table]:
        return [block for block in self.blocks if isinstance(block, Table)]
