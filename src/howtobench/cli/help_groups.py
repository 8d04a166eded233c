"""`--help` of the long commands in option groups (what to judge, the model under test, the judge, money, files and
cache), so sixty flags read as six short lists. The CLI prints click's plain help (no rich markup: docstrings
reflow), where typer's `rich_help_panel` is not drawn; `GroupedCommand` draws it there, one section per panel in the
order the panels first appear, options without a panel first under "Options"."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand

SELECTION = "What to judge"
WRITER = "The model under test"
JUDGE = "The judge"
MONEY = "Money and batch"
FILES = "Files, cache and progress"


class GroupedCommand(TyperCommand):
    """A command whose plain `--help` lists its options under their `rich_help_panel`."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        groups: dict[str, list[tuple[str, str]]] = {"Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                groups.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
        for title, records in groups.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def command_group(name: str, help: str) -> typer.Typer:
    """A command made of sub-commands (`howtobench data ...`): bare, it prints its --help; its help is plain click
    help, like the root's (docstrings reflow)."""
    return typer.Typer(name=name, help=help, no_args_is_help=True, rich_markup_mode=None)
