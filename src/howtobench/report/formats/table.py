"""The terminal view (`--format table`): rich tables fitted to the terminal's width (report.fit), in one of two
looks (`Table.look`); a titled document (the leaderboard) as one group ending with its headline."""

from __future__ import annotations

import io

from rich.console import Console, Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from howtobench.document import Document, Paragraph, Table, label_columns, numeric_column
from howtobench.report.fit import Fitted, Grid, TableMaker
from howtobench.report.formats import Format, register


def rich_grid(title: str, header: list[str], body: list[list[str]], caption: str = "") -> RichTable:
    """The plain look: a rich Table of display text. Title, caption and cells are text, never rich markup ("[n/a]",
    "[fill in the blank]" stay as written); `overflow="fold"` only matters when even one word is wider than the
    terminal."""
    out = RichTable(title=Text(title), caption=Text(caption) if caption else None, show_lines=False)
    for k, name in enumerate(header):
        right = numeric_column([row[k] for row in body])
        out.add_column(Text(name), justify="right" if right else "left", overflow="fold")
    for row in body:
        out.add_row(*(Text(cell) for cell in row))
    return out


def board_grid(dim_marker: str | None) -> TableMaker:
    """The leaderboard's look: row labels left, numbers right, text holding `dim_marker` (the paper's reference
    values) dim. The last part is not told apart: a document's notes are lines of their own."""
    def dim(text: str) -> bool:
        return dim_marker is not None and dim_marker in text

    def make(title: str, header: list[str], body: list[list[str]], last: bool = True) -> RichTable:
        table = RichTable(title=title or None, title_justify="left", header_style="bold")
        for k, name in enumerate(header):
            table.add_column(name, justify="left" if k == 0 else "right", style="dim" if dim(name) else None,
                             overflow="fold")  # only when even one word does not fit the terminal: wrap, never cut
        for line in body:
            table.add_row(*(Text(cell, style="dim" if dim(cell) else "") for cell in line))
        return table

    return make


def fitted(table: Table) -> Fitted:
    """The terminal rendering of `table` (report.fit): as laid out when it fits, else turned (its rows become
    columns) or wrapped between words, else split into parts that repeat the row labels; notes under the last."""
    labels = table.turn.labels if table.turn.labels is not None else label_columns(table)
    grid = Grid(table.title, list(table.columns), table.display_rows(), labels=labels)
    if table.look == "board":
        make = board_grid(table.dim_marker)
    else:
        notes = "\n".join(table.notes)
        def make(title: str, header: list[str], body: list[list[str]], last: bool) -> RichTable:
            return rich_grid(title, header, body, notes if last else "")
    return Fitted(grid, make, turned_label=table.turn.label, corner=table.turn.corner)


def _block(block: Table | Paragraph) -> list[RenderableType]:
    if isinstance(block, Table):
        return [fitted(block)]
    return [Text(line, style="dim") for line in block.lines]


def document_view(doc: Document) -> RenderableType:
    """A titled document as one renderable: notes, blocks, warnings, footer, then the headline (the answer last,
    visible without scrolling)."""
    parts: list[RenderableType] = [Text(note, style="bold magenta") for note in doc.notes]
    for block in doc.blocks:
        parts += _block(block)
    parts += [Text(f"warning: {w}", style="yellow") for w in doc.warnings]
    for paragraph in doc.footer:
        parts += _block(paragraph)
    parts += [Text(line, style="bold") for line in doc.headline]
    return Group(*parts)


def views(doc: Document) -> list[RenderableType]:
    """What is printed, in order: a titled document as one group, else each table on its own."""
    return [document_view(doc)] if doc.title is not None else [fitted(t) for t in doc.tables]


def terminal_text(doc: Document) -> str:
    """As printed to a plain 200-column terminal (what `-o` writes)."""
    buf = io.StringIO()
    show_views(doc, Console(file=buf, width=200))
    return buf.getvalue()


def show_views(doc: Document, console: Console) -> None:
    for view in views(doc):
        console.print(view)


register(Format("table", "table (terminal)", 0, terminal_text, show_views))
