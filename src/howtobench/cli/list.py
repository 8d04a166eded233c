"""`howtobench list methods|trees|tasks|genres|models`: what exists, without reading the data or starting a model."""

from __future__ import annotations

from typing import Annotated

import typer

from howtobench.catalog import BUILDERS, CATALOGS
from howtobench.report.tables import print_tables
from howtobench.suggest import unknown_name

from .options import FormatOpt


def _check_catalog(value: str) -> str:
    if value not in BUILDERS:
        raise typer.BadParameter(unknown_name("catalog", value, CATALOGS))
    return value


WhatArg = Annotated[
    str,
    typer.Argument(callback=_check_catalog, metavar="|".join(CATALOGS),
                   help="What to list: judge methods, shipped trees, tasks, genres, or the paper's shipped models."),
]


def list_cmd(what: WhatArg, fmt: FormatOpt = "table") -> None:
    """List what the toolkit knows: judge methods (--method), tree specs (--tree), tasks (--task), genres (--genre)
    and the paper's ten shipped models (--models) with their published scores."""
    print_tables([BUILDERS[what]()], fmt)


def register(app: typer.Typer) -> None:
    app.command("list")(list_cmd)
