"""One table model and its four renderings (rich, Markdown, CSV, JSON), shared by every report.

Analyses build a `Table` of plain values (str, int, float, None) and hand it to `render` or
`print_table`; no analysis formats numbers itself, so every command's `--format` behaves alike.
JSON keeps the raw values (floats unrounded, None as null) so scripts never parse display strings;
the other formats round floats to `Table.digits` and show None as `-`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from howtobench.report.fit import Fitted, Grid

Format = Literal["table", "markdown", "csv", "json"]
FORMATS: tuple[str, ...] = ("table", "markdown", "csv", "json")
TERMINAL = ("table",)
Cell = Any


@dataclass
class Table:
    """A titled grid of values with optional footnotes (e.g. significance marks explained)."""

    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 2
    formats: dict[str, str] = field(default_factory=dict)
    """Per-column format spec for floats in display formats (e.g. {"p": ".1e"}); JSON stays raw."""

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


def format_cell(value: Cell, digits: int = 2, spec: str | None = None) -> str:
    """Display text of one value: floats rounded (or in `spec`), None and NaN as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else format(value, spec or f".{digits}f")
    return str(value)


def _json_value(value: Cell) -> Cell:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def markdown_grid(header: list[str], body: list[list[str]]) -> str:
    """The lines of a GitHub-flavoured Markdown table (no trailing newline); `|` in cells is escaped.

    Also used by the leaderboard's own Markdown view, so every Markdown table the toolkit writes is alike.
    """
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(row) for row in body)])


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with the title as a heading line and notes below."""
    lines = [f"**{table.title}**", "", markdown_grid(table.columns, table.display_rows())]
    if table.notes:
        lines += [""] + table.notes
    return "\n".join(lines) + "\n"


def to_csv(table: Table) -> str:
    """Header row plus one line per row; numbers rounded like the other display formats."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.display_rows())
    return buf.getvalue()


def to_json(table: Table) -> str:
    """Machine-readable: title, columns, raw-valued records and notes."""
    rows = [{k: _json_value(v) for k, v in rec.items()} for rec in table.records()]
    doc = {"title": table.title, "columns": table.columns, "rows": rows, "notes": table.notes}
    return json.dumps(doc, ensure_ascii=False, indent=2)


NUMBER = re.compile(r"[=+\-−]?\d[\d.,]*(?:e[+-]?\d+)?%?(?:\s*\[[^\]]*\])?[^\w\s]*")
"""Display text that reads as a number: "0.93 [0.85, 0.97]", "=6.10 [5.9, 6.3]▲*", "1.2e-05", "12.5%" (not a run id
such as 20260101T100000Z-ab12cd)."""
BLANKS = ("-", "—", "")


def numeric_column(cells: list[str]) -> bool:
    """A column of numbers (blanks aside) is right-aligned; decided on the text, so it holds once turned too."""
    shown = [c for c in cells if c not in BLANKS]
    return bool(shown) and all(NUMBER.fullmatch(c.strip()) for c in shown)


def rich_grid(title: str, header: list[str], body: list[list[str]], caption: str = "") -> RichTable:
    """A rich Table of display text. Title, caption and cells are text, never rich markup ("[n/a]", "[fill in the
    blank]" stay as written); `overflow="fold"` only matters when even one word is wider than the terminal."""
    out = RichTable(title=Text(title), caption=Text(caption) if caption else None, show_lines=False)
    for k, name in enumerate(header):
        right = numeric_column([row[k] for row in body])
        out.add_column(Text(name), justify="right" if right else "left", overflow="fold")
    for row in body:
        out.add_row(*(Text(cell) for cell in row))
    return out


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


def fitted(table: Table) -> Fitted:
    """The terminal rendering of `table` (report.fit): as laid out when it fits, else turned (its rows become
    columns) or wrapped between words, else split into parts that repeat the row labels; notes under the last."""
    notes = "\n".join(table.notes)
    grid = Grid(table.title, list(table.columns), table.display_rows(), labels=label_columns(table))
    return Fitted(grid, lambda title, header, body, last: rich_grid(title, header, body, notes if last else ""),
                  turned_label="turned to fit the terminal")


_TEXT_RENDERERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}


def render(table: Table, fmt: str) -> str:
    """Text of `table` in `fmt` ('table' renders as a plain-text terminal table)."""
    if fmt in TERMINAL:
        console = Console(file=io.StringIO(), width=200, record=True)
        console.print(fitted(table))
        return console.export_text()
    if fmt not in _TEXT_RENDERERS:
        raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return _TEXT_RENDERERS[fmt](table)


def print_tables(tables: list[Table], fmt: str, console: Console | None = None) -> None:
    """Print tables to the terminal; several JSON tables print as one JSON list so the output stays parseable."""
    console = console or Console()
    if fmt == "json":
        docs = [json.loads(to_json(t)) for t in tables]
        console.print_json(json.dumps(docs if len(docs) != 1 else docs[0], ensure_ascii=False))
        return
    for table in tables:
        if fmt in TERMINAL:
            console.print(fitted(table))
        else:
            console.print(render(table, fmt), markup=False, highlight=False, soft_wrap=True)
