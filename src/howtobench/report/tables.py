"""Tables and documents as text and on the terminal, in any `--format` (report.formats).

The model itself (`Table`, `Document`, ...) is howtobench.document, below every analysis: meta, robustness and
rate build Tables from it without importing report. It is re-exported here for the commands, which build and print.
"""

from __future__ import annotations

from rich.console import Console

from howtobench.document import (
    BLANKS,
    NUMBER,
    Block,
    Cell,
    Document,
    Paragraph,
    Table,
    Turn,
    format_cell,
    label_columns,
    numeric_column,
)
from howtobench.report.formats import output_format

__all__ = ["BLANKS", "NUMBER", "Block", "Cell", "Document", "Paragraph", "Table", "Turn", "format_cell",
           "label_columns", "numeric_column", "print_tables", "render", "show"]


def render(what: Table | Document, fmt: str) -> str:
    """Text of a table or document in `fmt` ('table' renders as a plain-text terminal table, 200 columns wide)."""
    doc = what if isinstance(what, Document) else Document([what])
    return output_format(fmt).text(doc)


def show(doc: Document, fmt: str, console: Console | None = None) -> None:
    """Print `doc` to the terminal in `fmt`."""
    output_format(fmt).show(doc, console or Console())


def print_tables(tables: list[Table], fmt: str, console: Console | None = None) -> None:
    """Print tables to the terminal, each on its own; several JSON tables print as one JSON list so the output
    stays parseable."""
    show(Document(list(tables)), fmt, console)
