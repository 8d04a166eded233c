"""`howtobench headings`: print the heading tree (Listing 1 of the paper) of a text or of every line of a JSONL file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from howtobench.data.rows import iter_json_objects
from howtobench.errors import DataError, RowError
from howtobench.judges.headings import parse_headings
from howtobench.outputs import read_cause


def _read_text(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {source}: {read_cause(exc)}") from exc


def jsonl_trees(path: Path, field: str) -> list[dict[str, object]]:
    """One heading tree per non-blank line of `path`, from the string `field` of each JSON object, in order."""
    trees = []
    for number, row in iter_json_objects(path):
        value = row.get(field)
        if not isinstance(value, str):
            raise RowError(path, number, f"field {field!r} is missing or not a string")
        trees.append(parse_headings(value))
    return trees


def headings(
    source: Annotated[str, typer.Argument(help="Text file to parse, or - for standard input.")] = "-",
    jsonl: Annotated[
        Path | None,
        typer.Option("--jsonl", help="Parse every line of this JSONL file instead (one tree per line, in order)."),
    ] = None,
    field: Annotated[str, typer.Option("--field", help="With --jsonl: the string field holding the text.")] = "output",
    indent: Annotated[
        int | None, typer.Option("--indent", help="Indent the JSON of a single tree by this many spaces.")
    ] = 2,
) -> None:
    """Print the heading tree of a writing as JSON: {"title", "type", "subtopics"} nodes under a "Root" node.

    The parser is the paper's (Markdown #, 一、, （一）, 1., -) with its levels, made total: it never fails on any text.
    """
    if jsonl is not None:
        for tree in jsonl_trees(jsonl, field):
            typer.echo(json.dumps(tree, ensure_ascii=False))
        return
    typer.echo(json.dumps(parse_headings(_read_text(source)), ensure_ascii=False, indent=indent))


def register(app: typer.Typer) -> None:
    app.command("headings")(headings)
