"""JSON (`--format json`, raw numbers for scripts): a table's title, columns, raw-valued records and notes; a
document with its own JSON shape (the leaderboard's) as that."""

from __future__ import annotations

import json
import math
from typing import Any

from rich.console import Console

from howtobench.document import Cell, Document, Table
from howtobench.report.formats import Format, register


def _json_value(value: Cell) -> Cell:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def table_data(table: Table) -> dict[str, Any]:
    rows = [{k: _json_value(v) for k, v in rec.items()} for rec in table.records()]
    return {"title": table.title, "columns": table.columns, "rows": rows, "notes": table.notes}


def _tables_data(doc: Document) -> Any:
    docs = [table_data(t) for t in doc.tables]
    return docs if len(docs) != 1 else docs[0]


def json_text(doc: Document) -> str:
    if doc.data is not None:
        return json.dumps(doc.data, ensure_ascii=False, indent=2) + "\n"
    return json.dumps(_tables_data(doc), ensure_ascii=False, indent=2)


def show_json(doc: Document, console: Console) -> None:
    """A document's own JSON as its file; several tables as one JSON list, so the output stays parseable."""
    if doc.data is not None:
        console.file.write(json_text(doc))
        console.file.flush()
        return
    console.print_json(json.dumps(_tables_data(doc), ensure_ascii=False))


register(Format("json", "json (raw numbers, for scripts)", 3, json_text, show_json, for_machines=True))
