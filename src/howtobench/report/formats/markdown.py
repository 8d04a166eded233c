"""Markdown (`--format markdown`): GitHub-flavoured tables; a titled document (the leaderboard) as one page with a
heading, its tables as sections."""

from __future__ import annotations

from howtobench.document import Document, Paragraph, Table
from howtobench.report.formats import TextFormat, register


def markdown_grid(header: list[str], body: list[list[str]]) -> str:
    """The lines of a GitHub-flavoured Markdown table (no trailing newline); `|` in cells is escaped."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(row) for row in body)])


def table_markdown(table: Table) -> str:
    """A table on its own: the title as a bold line, the grid, notes below."""
    lines = [f"**{table.title}**", "", markdown_grid(table.columns, table.display_rows())]
    if table.notes:
        lines += [""] + table.notes
    return "\n".join(lines) + "\n"


def _section(block: Table | Paragraph) -> list[str]:
    """A block of a titled document followed by a blank line (nothing for an empty paragraph)."""
    if isinstance(block, Paragraph):
        return [*(f"`{line}`" if block.code else line for line in block.lines), ""] if block.lines else []
    notes = [*block.notes, ""] if block.notes else []
    return [f"### {block.title}", "", markdown_grid(block.columns, block.display_rows()), "", *notes]


def document_markdown(doc: Document) -> str:
    """Heading, notes as quotes, the headline as a list, the blocks as sections, warnings, footer."""
    parts = [f"## {doc.title}", ""]
    parts += [f"> {note}" for note in doc.notes] + ([""] if doc.notes else [])
    parts += [*(f"- {line}" for line in doc.headline), ""]
    for block in doc.blocks:
        parts += _section(block)
    if doc.warnings:
        parts += ["**Warnings**", "", *(f"- {w}" for w in doc.warnings), ""]
    for paragraph in doc.footer:
        parts += _section(paragraph)
    if parts[-1] == "":
        parts.pop()
    return "\n".join(parts) + "\n"


def markdown(doc: Document) -> str:
    if doc.title is not None:
        return document_markdown(doc)
    return "\n".join(table_markdown(table) for table in doc.tables)


register(TextFormat("markdown", "markdown", 1, markdown))
