"""Every command's --help explains itself, and the shared --format vocabulary holds everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from howtobench.cli.main import build_app
from howtobench.report.formats import names


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the CLI with its path (typer vendors its own click, so no isinstance checks)."""
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield path, command


ALL = list(commands(typer.main.get_command(build_app())))


def test_every_command_and_option_has_help() -> None:
    assert len(ALL) > 25
    for path, command in ALL:
        assert (command.help or "").strip(), path
        for param in command.params:
            if param.param_type_name == "option" and not getattr(param, "hidden", False):
                assert (param.help or "").strip(), (path, param.opts)


def test_every_format_option_defaults_to_a_documented_format() -> None:
    """`rate status --help` said "[default: rich]", a name its own help text does not list."""
    found = [(path, p.default) for path, command in ALL for p in command.params if "--format" in getattr(p, "opts", [])]
    assert len(found) >= 10
    assert [(path, default) for path, default in found if default not in names()] == []


def test_run_help_names_every_file_of_the_run_directory() -> None:
    """`run --help` left out report.html, which every run writes next to the leaderboard."""
    run = dict(ALL)[("run",)]
    text = " ".join((run.help or "").split())
    for name in ("config.yaml", "writings/", "judgments/", "leaderboard.{md,json,csv}", "report.html", "manifest.json"):
        assert name in text, name


def test_top_level_help_lists_every_command_with_a_whole_summary() -> None:
    """At 80 columns click cut each docstring's first sentence mid-phrase ("W =...", "(method, item,..."), in the
    top-level listing and in each group's (meta, rate, analyze, build, data, llm)."""
    from typer.testing import CliRunner

    from howtobench.cli.main import COMMAND_MODULES, SUMMARIES

    def listed(*group: str) -> list[str]:
        listing = CliRunner().invoke(build_app(), [*group, "--help"], terminal_width=80).output
        return listing[listing.index("Commands:"):].split("\n\n")[0].splitlines()[1:]

    top = listed()
    assert sorted(line.split()[0] for line in top) == sorted(COMMAND_MODULES)
    groups = ("data", "meta", "rate", "analyze", "build", "llm")
    for group, line in [("", line) for line in top] + [(f"{g} ", line) for g in groups for line in listed(g)]:
        name, summary = line.split(maxsplit=1)
        assert group + name in SUMMARIES, f"`{group}{name}`: add its one-line summary to cli/main.SUMMARIES"
        assert summary == SUMMARIES[group + name] and not summary.endswith("..."), line
    assert len(SUMMARIES) == len(top) + sum(len(listed(g)) for g in groups)  # no summary of a gone command


def test_exit_statuses_in_help_are_the_readmes_five() -> None:
    """The epilog listed 0, 2, 3 and 4 but not 1 (an unexpected error), which the README's table explains."""
    from howtobench.cli.status import EXIT_STATUSES

    text = " ".join(EXIT_STATUSES.split())
    positions = [text.find(f"; {n} ") if n else text.find("0 every") for n in range(5)]
    assert -1 not in positions and positions == sorted(positions)
    assert "1 an unexpected error (a bug" in text


def test_the_long_commands_list_their_options_in_groups() -> None:
    """`run --help` was one list of ~70 options; the long commands now group them (issue 23, 15)."""
    from typer.testing import CliRunner

    sections = {"What to judge:": "--subset", "The model under test:": "--base-url", "The judge:": "--judge-model",
                "Money and batch:": "--max-cost", "Files, cache and progress:": "--workspace"}
    for command in ("run", "judge", "generate", "robustness"):
        text = CliRunner().invoke(build_app(), [command, "--help"], terminal_width=100).output
        titles = [line for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
        # the endpoint groups first, what you type first (issue 40, 3); the rest under "The run:" etc.
        assert titles[0] in ("The model under test:", "The judge:"), (command, titles)
        present = [title for title in sections if title in titles]
        assert len(present) >= (5 if command == "run" else 3), (command, titles)  # judge has no writer
        for title in present:
            block = text[text.index(f"\n{title}\n"):].split("\n\n")[0]
            flag = sections[title]
            assert f"  {flag} " in block or f"  {flag}\n" in block or flag not in text, (command, title, flag)
