"""The guard's command-line options, shared by `guard`, `serve`, `judge` and `run` (docs/guard.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer

from howtobench.errors import ConfigError
from howtobench.guard.guard import GUARD_MODES, GuardMode, GuardSettings, parse_guard_reward
from howtobench.guard.rules import parse_assignments, parse_thresholds

GUARD_PANEL = "Guard (cheap checks before the judge)"

GuardThresholdOpt = Annotated[
    list[str] | None,
    typer.Option("--guard-threshold", metavar="RULE=NUMBER", rich_help_panel=GUARD_PANEL,
                 help="A rule's threshold in place of its default (repeatable), e.g. loop_paragraphs=0.4; "
                      "`howtobench guard` shows what each would flag."),
]
GuardActionOpt = Annotated[
    list[str] | None,
    typer.Option("--guard-action", metavar="RULE=skip|flag", rich_help_panel=GUARD_PANEL,
                 help="Whether --guard skip skips what a rule flags (skip) or only flags it (repeatable)."),
]
GuardClichesOpt = Annotated[
    Path | None,
    typer.Option("--guard-cliches", rich_help_panel=GUARD_PANEL,
                 help="Your own cliche lexicon (YAML: zh: [...], en: [...]) in place of ours."),
]
GuardRewardOpt = Annotated[
    str,
    typer.Option("--guard-reward", rich_help_panel=GUARD_PANEL,
                 help="The reward of a skipped writing: floor (0, the bottom of the scale), null, or a number."),
]


def guard_settings(mode: str, thresholds: list[str] | None, actions: list[str] | None, cliches: Path | None,
                   reward: str = "floor") -> GuardSettings:
    """The `GuardSettings` of the command-line options (a ConfigError names a bad value)."""
    if mode not in GUARD_MODES:
        raise ConfigError(f"--guard is one of {', '.join(GUARD_MODES)}, not {mode!r}")
    acts = parse_assignments(actions, "--guard-action")
    return GuardSettings(mode=cast(GuardMode, mode), thresholds=parse_thresholds(thresholds),
                         actions=cast(dict[str, Literal["skip", "flag"]], acts), reward=parse_guard_reward(reward),
                         cliches=cliches)


def _mode_option(default: str) -> Any:
    return typer.Option("--guard", rich_help_panel=GUARD_PANEL,
                        help="off: no checks; flag: record the guard's signals and flags with every judgment; skip: "
                             "also answer a writing that a skip rule flags without any judge call, counted like a "
                             f"failure (docs/guard.md). Default: {default}.")


@dataclass(frozen=True)
class GuardFlags:
    """The guard's flags of `judge` and `run` (off by default: the paper judges everything)."""

    guard: Annotated[str, _mode_option("off")] = "off"
    guard_reward: GuardRewardOpt = "floor"
    guard_threshold: GuardThresholdOpt = None
    guard_action: GuardActionOpt = None
    guard_cliches: GuardClichesOpt = None

    def settings(self) -> GuardSettings:
        return guard_settings(self.guard, self.guard_threshold, self.guard_action, self.guard_cliches,
                              self.guard_reward)


@dataclass(frozen=True)
class ServeGuardFlags(GuardFlags):
    """`serve`'s guard flags: `flag` by default (the signals come back with every reward)."""

    guard: Annotated[str, _mode_option("flag")] = "flag"


SERVE_GUARD = ServeGuardFlags()
NO_GUARD = GuardFlags()
"""The defaults of the commands' `guard` parameters (what the flags' defaults make)."""
