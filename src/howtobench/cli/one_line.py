"""Errors as one line on stderr: ours, and click's usage errors too.

Click answers a bad flag value, a missing argument, an unknown option or an unknown command with a block (the
usage line, "Try '... --help' for help.", a blank line, "Error: ..."). Every other error of the toolkit is one
line, so the root group (`OneLineUsageGroup`) turns click's into one as well: its own message, which names the
flag and the problem (and suggests the options it knows for a misspelt one), the command's `--help` to read, exit
status 2 as click gives. `howtobench` or a group named without a command still prints its help.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from howtobench.redact import redact_text

_CLICK_ERRORS = sys.modules[typer.BadParameter.__module__]
"""click's exceptions module, reached through typer's public `BadParameter` (which is click's), whether typer
uses click itself or a copy it vendors privately (typer._click, from 0.29): no private module is imported by
name, so typer needs no version cap. A typer whose BadParameter lived elsewhere would fail here at import, not
print click's usage blocks silently (tests/cli/test_bad_values.py)."""
UsageError: type[Exception] = _CLICK_ERRORS.UsageError
MissingParameter: type[Exception] = _CLICK_ERRORS.MissingParameter
NoArgsIsHelpError: type[Exception] = _CLICK_ERRORS.NoArgsIsHelpError
EXIT_USAGE = 2  # click's status for a usage error


def print_line(message: str, prefix: str = "error:") -> None:
    """One line on stderr: `prefix` in bold red, then the message (redacted; yellow when there is no prefix)."""
    console = Console(stderr=True, soft_wrap=True)
    if prefix:
        console.print(prefix, style="bold red", end=" ")
    console.print(redact_text(message), style=None if prefix else "yellow", highlight=False, markup=False)


def usage_line(error: Any) -> str:
    """Click's message in one line: a bad value as `--flag: what is wrong`, then where the command's help is."""
    text = " ".join(error.format_message().split())
    if isinstance(error, typer.BadParameter) and not isinstance(error, MissingParameter):
        hint = _hint(error)
        text = f"{hint}: {' '.join(error.message.split())}" if hint else text
    ctx = error.ctx
    return f"{text} (see {ctx.command_path} --help)" if ctx is not None else text


def _hint(error: Any) -> str | None:
    """The flag (or argument) a bad value was given to, without click's quotes."""
    given: Sequence[str] | str | None = error.param_hint
    if given is None and error.param is not None:
        given = error.param.get_error_hint()
    if given is None:
        return None
    names = [given] if isinstance(given, str) else list(given)
    return " / ".join(name.strip("'\"") for name in names)


@contextmanager
def one_line_usage() -> Iterator[None]:
    """Click's usage errors (not "no arguments: here is the help") as one line, then exit status 2 as click
    gives."""
    try:
        yield
    except NoArgsIsHelpError:
        raise
    except UsageError as exc:
        print_line(usage_line(exc))
        raise typer.Exit(EXIT_USAGE) from None


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
