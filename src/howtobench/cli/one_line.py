"""Errors as one line on stderr: ours, and click's usage errors too.

Click answers a bad flag value, a missing argument, an unknown option or an unknown command with a block (the
usage line, "Try '... --help' for help.", a blank line, "Error: ..."). Every other error of the toolkit is one
line, so the root group (`OneLineUsageGroup`) turns click's into one as well: its own message, which names the
flag and the problem (and suggests the options it knows for a misspelt one), the command's `--help` to read, exit
status 2 as click gives. `howtobench` or a group named without a command still prints its help.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console
from typer._click.exceptions import (  # typer vendors click; only BadParameter is re-exported by name
    BadParameter,
    ClickException,
    MissingParameter,
    NoArgsIsHelpError,
    UsageError,
)
from typer.core import TyperGroup

from howtobench.redact import redact_text


def print_line(message: str, prefix: str = "error:") -> None:
    """One line on stderr: `prefix` in bold red, then the message (redacted; yellow when there is no prefix)."""
    console = Console(stderr=True, soft_wrap=True)
    if prefix:
        console.print(prefix, style="bold red", end=" ")
    console.print(redact_text(message), style=None if prefix else "yellow", highlight=False, markup=False)


def usage_line(error: UsageError) -> str:
    """Click's message in one line: a bad value as `--flag: what is wrong`, then where the command's help is."""
    text = " ".join(error.format_message().split())
    if isinstance(error, BadParameter) and not isinstance(error, MissingParameter):
        hint = _hint(error)
        text = f"{hint}: {' '.join(error.message.split())}" if hint else text
    ctx = error.ctx
    return f"{text} (see {ctx.command_path} --help)" if ctx is not None else text


def _hint(error: BadParameter) -> str | None:
    """The flag (or argument) a bad value was given to, without click's quotes."""
    given: Sequence[str] | str | None = error.param_hint
    if given is None and error.param is not None:
        given = error.param.get_error_hint()
    if given is None:
        return None
    names = [given] if isinstance(given, str) else list(given)
    return " / ".join(name.strip("'\"") for name in names)


class OneLineUsageError(ClickException):
    """A usage error already put in one line; click's main shows it with `show` and exits with status 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        print_line(self.message)


@contextmanager
def one_line_usage() -> Iterator[None]:
    """Re-raise click's usage errors (not "no arguments: here is the help") as one-line ones."""
    try:
        yield
    except NoArgsIsHelpError:
        raise
    except UsageError as exc:
        raise OneLineUsageError(usage_line(exc)) from None


class OneLineUsageGroup(TyperGroup):
    """The root group: usage errors of the root and of every command under it come out as one line. Click raises
    them while it builds a command's context (parsing its arguments), which for a sub-command happens inside the
    root's `invoke`; both are wrapped."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with one_line_usage():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with one_line_usage():
            return super().invoke(ctx)
