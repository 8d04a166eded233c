"""Output format `tsv`: each table as a title line, its header and rows, tab-separated."""

from __future__ import annotations

from howtobench.document import Document
from howtobench.report.formats import TextFormat, register


def tsv(doc: Document) -> str:
    return "\n".join("\n".join("\t".join(line) for line in [[f"# {t.title}"], t.columns, *t.display_rows()]) + "\n"
                     for t in doc.tables)


register(TextFormat("tsv", "tsv (a plugin)", 9, tsv, verbatim=True, for_machines=True))
