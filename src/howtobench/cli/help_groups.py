"""`--help` of the long commands in option groups (the model under test, the judge, what to judge, money, files and
cache), so sixty flags read as short lists, starting with what a newcomer types first. The CLI prints click's plain
help (no rich markup: docstrings reflow), where typer's `rich_help_panel` is not drawn; `GroupedCommand` draws it
there: the docstring's first paragraph, then one section per panel in `PANEL_ORDER` (the endpoint groups first, their
knobs in a later group: cli/help_text.py), then Examples, the rest of the docstring ("More"), and the epilog."""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer.core import TyperCommand

from howtobench.cli.help_text import (
    EXAMPLES,
    MOVED,
    SAMPLED,
    SAMPLING,
    TUNED,
    TUNING,
    first_order,
    placeholder,
    wrapped,
)

SELECTION = "What to judge"
WRITER = "The model under test"
JUDGE = "The judge"
MONEY = "Money and batch"
FILES = "Files, cache and progress"


OTHER = "The run"
PANEL_ORDER = (WRITER, JUDGE, SELECTION, SAMPLING, OTHER, MONEY, TUNING, FILES)


def _panel(flags: list[str], own: str | None) -> str:
    """The group a flag is drawn in: the endpoint knobs and the writer's sampling in groups of their own, a few
    flags beside those a user gives with them (help_text.MOVED), every other in its own panel."""
    if set(flags) & TUNED:
        return TUNING
    if set(flags) & SAMPLED:
        return SAMPLING
    moved = next((MOVED[f] for f in flags if f in MOVED), None)
    return moved or own or OTHER


class GroupedCommand(TyperCommand):
    """A command whose plain `--help` lists its options under their `rich_help_panel`, what you type first on top."""

    def _paragraphs(self) -> list[str]:
        return inspect.cleandoc(self.help or "").partition("\f")[0].split("\n\n")

    def format_help_text(self, ctx: Any, formatter: Any) -> None:
        """Only the first paragraph before the options: the rest waits below them ("More")."""
        first = self._paragraphs()[0]
        if first:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(first)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        groups: dict[str, list[tuple[int, tuple[str, str]]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            flags = list(getattr(param, "opts", ()))
            panel = _panel(flags, getattr(param, "rich_help_panel", None))
            groups.setdefault(panel, []).append((first_order(flags), (placeholder(flags, record[0]), record[1])))
        titles = [t for t in PANEL_ORDER if t in groups] + [t for t in groups if t not in PANEL_ORDER]
        for title in titles:
            with formatter.section(title):
                formatter.write_dl([record for _, record in sorted(groups[title], key=lambda pair: pair[0])])

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        """Examples (as `gh` shows them), the rest of the docstring, then the epilog (exit statuses)."""
        examples = EXAMPLES.get(self.name or "", ())
        if examples:
            with formatter.section("Examples"):
                for example in examples:
                    lines = [example] if example.startswith("#") else \
                        wrapped(example, formatter.width, formatter.current_indent)
                    for line in lines:
                        formatter.write(f"{'':>{formatter.current_indent}}{line}\n")
        rest = [p for p in self._paragraphs()[1:] if p.strip()]
        if rest:
            with formatter.section("More"):
                for k, paragraph in enumerate(rest):
                    if k:
                        formatter.write_paragraph()
                    formatter.write_text(paragraph)
        super().format_epilog(ctx, formatter)


def command_group(name: str, help: str) -> typer.Typer:
    """A command made of sub-commands (`howtobench data ...`): bare, it prints its --help; its help is plain click
    help, like the root's (docstrings reflow)."""
    return typer.Typer(name=name, help=help, no_args_is_help=True, rich_markup_mode=None)
