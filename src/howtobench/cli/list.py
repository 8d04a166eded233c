"""`howtobench list methods|trees|tasks|genres|models`: what exists, without reading the data or starting a model."""

from __future__ import annotations

from typing import Annotated

import typer

from howtobench.catalog import BUILDERS, CATALOGS
from howtobench.report.tables import print_tables

from .options import FormatOpt, checked

WhatArg = Annotated[
    str,
    typer.Argument(callback=checked("catalog", lambda: CATALOGS), metavar="|".join(CATALOGS),
                   help="What to list: judge methods, shipped trees, tasks, genres, or the paper's shipped models."),
]


def list_cmd(what: WhatArg, fmt: FormatOpt = "table") -> None:
    """List what the toolkit knows: judge methods (--method), tree specs (--tree), tasks (--task), genres (--genre)
    and the paper's ten shipped models (--models) with their published scores."""
    print_tables([BUILDERS[what]()], fmt)


def register(app: typer.Typer) -> None:
    app.command("list")(list_cmd)
