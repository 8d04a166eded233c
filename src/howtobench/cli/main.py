"""The `howtobench` command: a thin shell over library functions.

Each command lives in its own module `howtobench.cli.<command>` and exposes
`register(app)`; this file only lists them. The console entry point's group is lazy (`LazyCommands`): a
command's module is imported when click asks for that command, so `howtobench data stats` does not wait for
the analysis commands' scipy and matplotlib, and `howtobench --help` (which lists them all) imports them all.
Errors the toolkit raises on purpose
are printed as one clear line, without a traceback, and exit with their class's status (errors.py); so are
filesystem errors (OSError) that no command turned into an OutputError (status 2). A `--max-failed-rate` stop
(TooManyFailures, status 4) and a `--max-cost` stop (BudgetExceeded, status 5) are not errors: their line has no
"error:" prefix. Click's usage errors (a bad flag value, an unknown option or command, a missing argument) are one
line too, exit 2 (cli/one_line.py).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterable
from difflib import get_close_matches
from typing import Annotated, Any, TextIO

import typer

from howtobench import __version__
from howtobench.cli.one_line import OneLineUsageGroup, UsageError, print_line
from howtobench.cli.status import EXIT_STATUSES
from howtobench.errors import (
    EXIT_INTERRUPTED,
    EXIT_STOPPED,
    INTERRUPTED,
    BudgetExceeded,
    HowtobenchError,
    Interrupted,
    TooManyFailures,
)
from howtobench.outputs import os_error_line
from howtobench.redact import redact_text

# Command name == module name under howtobench.cli; the order is the order of `--help`.
COMMAND_MODULES: tuple[str, ...] = (
    "data",
    "generate",
    "judge",
    "leaderboard",
    "run",
    "merge",
    "calibrate",
    "report",
    "headings",
    "guard",
    "meta",
    "rate",
    "serve",
    "analyze",
    "perturb",
    "robustness",
    "build",
    "llm",
    "list",
)

HELP = "Measure how well LLMs write long, human-level text: the HoWToBench benchmark and the Tree-of-Writing judge."


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"howtobench {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Measure how well LLMs write long, human-level text."""


class LazyCommands(OneLineUsageGroup):
    """The root group of the console entry point: lists every command, builds one when it is asked for."""

    # click's types, as typer vendors them (read by duck typing, like cli/config_file.py does)
    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMAND_MODULES)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            group = typer.main.get_command(build_app((cmd_name,)))
            self.commands[cmd_name] = group.commands[cmd_name]  # type: ignore[attr-defined]
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """typer's did-you-mean draws on the commands built so far (none, here): this one on every command name."""
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            error: Any = exc  # click's UsageError, reached through typer's public BadParameter (cli/one_line.py)
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in error.message:
                error.message = f"{error.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise


def build_app(commands: Iterable[str] | None = COMMAND_MODULES) -> typer.Typer:
    """The typer app with the given commands registered (all of them by default); None: the lazy app of the
    console entry point, whose commands are imported as they are named."""
    settings: dict[str, Any] = {"cls": LazyCommands if commands is None else OneLineUsageGroup}
    app = typer.Typer(
        name="howtobench",
        help=HELP,
        epilog=EXIT_STATUSES,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain click help: docstrings reflow instead of keeping their line breaks
        **settings,
    )
    # A root callback keeps the app a command group even when one command is registered.
    app.callback()(_root)
    for name in commands or ():
        importlib.import_module(f"howtobench.cli.{name}").register(app)
    _add_endpoint_settings(app)
    _add_summaries(app)
    return app


SUMMARIES: dict[str, str] = {
    "data": "Fetch the benchmark, see its shape.",
    "generate": "Your model writes the benchmark.",
    "judge": "Judge writings: ToW or a baseline.",
    "leaderboard": "Table 4 from judgment files.",
    "run": "Generate, judge and tabulate in one go.",
    "merge": "Join the parts of a sharded job.",
    "calibrate": "Map a new judge onto a reference judge.",
    "report": "One self-contained HTML report.",
    "headings": "The heading tree of a text, as JSON.",
    "guard": "Cheap checks before the judge: what they flag.",
    "perturb": "Damage writings for a robustness test.",
    "robustness": "Table 7: judges under perturbations.",
    "list": "Methods, trees, tasks, genres, models.",
    "meta": "Judges against human ratings (Table 3).",
    "rate": "Collect human ratings in a local app.",
    "serve": "Rewards over HTTP for RL trainers.",
    "analyze": "Length, weights, judge-vs-judge figures.",
    "build": "Build a benchmark from your own texts.",
    "llm": "Call usage and cost; the local model.",
    "data stats": "Items, lengths and writings per task.",
    "data download": "Fetch the release into the user cache.",
    "meta correlate": "Table 3: ρ, τ, σ against human ratings.",
    "meta agreement": "Inter-annotator agreement: κ, r, α.",
    "meta ablation": "Table 5: the root without each node.",
    "meta inconsistency": "Section 5.3: δ and σ of negotiations.",
    "rate serve": "Start the rating app for a study.",
    "rate export": "Write the ratings for `meta`.",
    "rate status": "Progress per rater, running agreement.",
    "analyze length": "Table 6 / Figure 5: length effects.",
    "analyze weights": "Figures 3 / 6: negotiated edge weights.",
    "analyze judges": "Figure 4: judge-vs-judge correlations.",
    "analyze panel": "Agreement inside a judge panel (α, ICC).",
    "analyze judge": "A report card per judge.",
    "build ingest": "Step 1: read texts, drop duplicates.",
    "build classify": "Step 2: a genre for each text.",
    "build filter": "Step 3: keep the well-written texts.",
    "build make": "Step 4: Completion / Guide / Open items.",
    "build export": "Step 5: the review file and page.",
    "build import": "Step 6: write the reviewed benchmark.",
    "llm usage": "Calls, tokens and cost from the call log.",
    "llm serve-local": "Serve the embedded model on loopback.",
}
"""The one-line summaries of `howtobench --help` and of each group's listing: short enough for an 80-column
terminal, where click cuts a docstring's first sentence mid-phrase ("W =...")."""


def _add_summaries(app: typer.Typer, prefix: str = "") -> None:
    for command in app.registered_commands:
        key = f"{prefix}{command.name}"
        if key in SUMMARIES and command.short_help is None:
            command.short_help = SUMMARIES[key]
    for group in app.registered_groups:  # their summary is otherwise the first sentence of their help
        key = f"{prefix}{group.name}"
        if key in SUMMARIES:
            group.short_help = SUMMARIES[key]
        if group.typer_instance is not None:
            _add_summaries(group.typer_instance, f"{key} ")


def _add_endpoint_settings(app: typer.Typer) -> None:
    """Every model-calling command (and sub-command) gets the full set of endpoint flags (see options)."""
    from howtobench.cli.options import add_endpoint_settings

    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = add_endpoint_settings(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _add_endpoint_settings(group.typer_instance)


def __getattr__(name: str) -> typer.Typer:
    """`from howtobench.cli.main import app` gives the full app (tests, documentation tools)."""
    if name == "app":
        return build_app()
    raise AttributeError(name)


def main() -> None:
    """Console entry point."""
    warnings.showwarning = _one_line_warning
    try:
        build_app(None)()
    except (TooManyFailures, BudgetExceeded, Interrupted) as exc:  # the user's limit or Ctrl-C: a line of its own
        _fail(str(exc), exc.exit_status, prefix="")
    except HowtobenchError as exc:
        _fail(str(exc), exc.exit_status)
    except OSError as exc:  # a filesystem failure no command has put in words yet: still one line, no traceback
        _fail(os_error_line(exc), EXIT_STOPPED)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # typer turns Ctrl-C into a silent exit 130
            _fail(INTERRUPTED, EXIT_INTERRUPTED, prefix="")
        raise




def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: TextIO | None = None, line: str | None = None) -> None:
    """A Python warning as one line, `warning: <message>` (Python's own shows the file, line and source line of the
    code that warned: nothing a user can act on)."""
    print(f"warning: {redact_text(str(message))}", file=file or sys.stderr)


def _fail(message: str, status: int, prefix: str = "error:") -> None:
    print_line(message, prefix)
    sys.exit(status)
