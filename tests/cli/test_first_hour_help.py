"""The first hour, finished (issue 40, 2-3): did-you-mean at every command level through the real entry point, and
`--help` that starts with what you type (the endpoint flags on the first 80 x 24 screen, Examples, choices)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata

import pytest

from howtobench.cli.help_text import EXAMPLES


def howtobench(*args: str) -> subprocess.CompletedProcess[str]:
    """The console entry point in a process of its own at 80 columns."""
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
    return subprocess.run([sys.executable, "-m", "howtobench", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize(("typed", "meant"), [("judg", "judge"), ("leaderbord", "leaderboard"),
                                              ("reprot", "report"), ("serv", "serve")])
def test_a_misspelt_command_gets_a_suggestion(typed: str, meant: str) -> None:
    done = howtobench(typed)
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"error: No such command '{typed}'. Did you mean '{meant}'?"), done.stderr


def test_no_suggestion_for_nothing_close_and_sub_commands_still_suggest() -> None:
    done = howtobench("xyzzy")
    assert done.returncode == 2 and "No such command 'xyzzy'." in done.stderr and "Did you mean" not in done.stderr
    done = howtobench("data", "stat")
    assert done.returncode == 2 and "Did you mean 'stats'?" in done.stderr


def _width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    found = {}
    for command in ("run", "judge", "generate", "serve"):
        done = howtobench(command, "--help")
        assert done.returncode == 0, done.stderr
        found[command] = done.stdout
    return found


FIRST_SCREEN = {
    "run": ("--base-url URL", "--model NAME", "--api-key-env VAR", "--judge-base-url URL", "--judge-model NAME"),
    "generate": ("--base-url URL", "--model NAME", "--api-key-env VAR", "--provider NAME"),
    "judge": ("--judge-base-url URL", "--judge-model NAME", "--judge-api-key-env VAR", "--judge-provider NAME"),
    "serve": ("--judge-base-url URL", "--judge-model NAME", "--judge-api-key-env VAR", "--judge-provider NAME"),
}


@pytest.mark.parametrize("command", list(FIRST_SCREEN))
def test_the_first_screen_shows_the_endpoint_flags(helps: dict[str, str], command: str) -> None:
    screen = "\n".join(helps[command].splitlines()[:24])
    for flag in FIRST_SCREEN[command]:
        assert f"\n  {flag} " in screen, (command, flag, screen)


@pytest.mark.parametrize("command", list(FIRST_SCREEN))
def test_placeholders_say_what_to_type_and_examples_close(helps: dict[str, str], command: str) -> None:
    text = helps[command]
    assert not re.search(r"<(str|int range|float range|path|list\[\w+\])>", text), command  # click's type names
    if command != "generate":
        assert "--method [autoplan|average|bleu|rouge|rubric|sacrebleu|single|tow]" in text
    if command != "serve":
        assert "--task [completion|guide|open]" in text
    examples = text[text.index("\nExamples:\n"):]
    commands = [line.strip() for line in examples.splitlines()[1:] if line.strip().startswith(("howtobench", "curl"))]
    assert len(commands) == sum(not e.startswith("#") for e in EXAMPLES[command])
    assert all(_width(line) <= 80 for line in text.splitlines() if "小说" not in line), command
    # the docstring's detail comes after the options ("More"), the exit statuses last
    if command != "serve":
        assert text.index("\n  Exit status: ") > text.index("\nMore:\n") > text.index("\nExamples:\n") > \
            text.index("--help")


def test_every_flag_is_still_listed_once(helps: dict[str, str]) -> None:
    """Moving flags between groups loses none and draws none twice."""
    from typer.main import get_command

    from howtobench.cli.main import build_app

    for command in ("run", "judge", "generate", "serve"):
        click_command = get_command(build_app((command,))).commands[command]  # type: ignore[attr-defined]
        flags = [next((o for o in p.opts if o.startswith("--")), p.opts[0]) for p in click_command.params
                 if not getattr(p, "hidden", False)]  # the first long name, as the help line starts
        options = helps[command].split("\nExamples:\n")[0]
        listed = re.findall(r"^  (?:-\w, )?(--[\w-]+)", options, flags=re.M)
        assert sorted(listed) == sorted([*(f for f in flags if f.startswith("--")), "--help"]), command


def test_the_run_examples_are_accepted(tmp_path: object) -> None:
    """Each `run` example parses: with --dry-run added, none stops on a usage error (exit 2 with 'No such option')."""
    for example in EXAMPLES["run"]:
        if example.startswith("#") or example == "howtobench run":
            continue
        args = example.split()[1:]
        done = howtobench(*args, "--dry-run", "--help")
        assert done.returncode == 0 and "No such option" not in done.stderr, (example, done.stderr)
