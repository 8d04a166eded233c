"""CSV (`--format csv`): a header row plus one line per row; a document's long form (the leaderboard's cell
records) in place of its shown tables."""

from __future__ import annotations

import csv
import io

from howtobench.document import Document, Table
from howtobench.report.formats import TextFormat, register


def table_csv(table: Table) -> str:
    """Numbers rounded like the other display formats (raw in a long form, `Table.digits` None)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.display_rows())
    return buf.getvalue()


def csv_text(doc: Document) -> str:
    tables = [doc.long_form] if doc.long_form is not None else doc.tables
    return "\n".join(table_csv(table) for table in tables)


register(TextFormat("csv", "csv", 2, csv_text, for_machines=True))
