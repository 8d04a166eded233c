"""The `howtobench` command: a thin shell over library functions.

Each command lives in its own module under `howtobench.cli` and exposes
`register(app)`; this file only lists them. Errors the toolkit raises on purpose are
printed as one clear line (exit code 2), without a traceback.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from howtobench.errors import HowtobenchError

COMMAND_MODULES: tuple[str, ...] = (
    "meta",
    "analyze",
    "headings",
    "judge",
    "data",
    "build",
    "leaderboard",
    "generate",
    "run",
    "perturb",
    "robustness",
    "llm",
    "report",
)

app = typer.Typer(
    name="howtobench",
    help="Measure how well LLMs write long, human-level text: the HoWToBench benchmark and the Tree-of-Writing judge.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"howtobench.cli.{_name}").register(app)


def main() -> None:
    """Console entry point."""
    try:
        app()
    except HowtobenchError as exc:
        console = Console(stderr=True, soft_wrap=True)
        console.print("error:", style="bold red", end=" ")
        console.print(str(exc), highlight=False, markup=False)
        sys.exit(2)
