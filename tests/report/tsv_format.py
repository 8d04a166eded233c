"""A tiny output format in one module, as a plugin would write it: tab-separated values, one block per table, for
programs and spreadsheets (`for_machines`: commands give it numbers in columns of their own)."""

from __future__ import annotations

from howtobench.report.formats import TextFormat, register
from howtobench.report.tables import Document


def tsv(doc: Document) -> str:
    """Each shown table as a title line, a header and its rows, tab-separated; a blank line between tables."""
    blocks = ["\n".join("\t".join(line) for line in [[f"# {t.title}"], t.columns, *t.display_rows()]) + "\n"
              for t in doc.tables]
    return "\n".join(blocks)


TSV = register(TextFormat("tsv", "tsv", 9, tsv, verbatim=True, for_machines=True))
