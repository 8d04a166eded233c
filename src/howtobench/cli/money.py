"""The money-first flags every paid command shares: the estimate before the first call, a confirmation above
a threshold, and `--max-cost` (see `howtobench.llm.budget`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import MONEY
from howtobench.config import EndpointConfig
from howtobench.errors import EXIT_STOPPED, ConfigError
from howtobench.llm.budget import Quote, expected_total, first_screen, time_text, total_text
from howtobench.llm.dryrun import Estimate, render
from howtobench.llm.local import LOCAL_MODEL
from howtobench.progress import step

DEFAULT_CONFIRM_ABOVE = 5.0

YesOpt = Annotated[bool, typer.Option("--yes", "-y", rich_help_panel=MONEY,
                                      help="Go ahead without asking, whatever the estimate (needed "
                                      "above --confirm-above when there is no terminal to ask on).")]
MaxCostOpt = Annotated[float | None, typer.Option(
    "--max-cost", rich_help_panel=MONEY,
        min=0.0, help="Stop cleanly (exit status 5) once this command's cost reaches this many dollars: "
    "each call's upper-bound cost is held before it is sent, so the limit is passed by at most one call; the calls "
    "in flight finish; no row is written for refused calls. The limit counts per command: a re-run resumes and "
    "counts from $0 again. Needs a price for every model called (--prices).")]
ConfirmAboveOpt = Annotated[float, typer.Option(
    "--confirm-above", rich_help_panel=MONEY,
        min=0.0, help="Ask before a command whose estimate is above this many dollars "
    f"(default {DEFAULT_CONFIRM_ABOVE:g}); without a terminal, refuse unless --yes.")]


@dataclass(frozen=True)
class Money:
    """The money-first flags of one command (each field is its flag: `params.bundled` reads them)."""

    yes: YesOpt = False
    max_cost: MaxCostOpt = None
    confirm_above: ConfirmAboveOpt = DEFAULT_CONFIRM_ABOVE


def stdin_is_terminal() -> bool:
    """Whether a person can be asked (tests replace this)."""
    return sys.stdin.isatty()


def priced_lanes(estimates: Sequence[Estimate]) -> list[Estimate]:
    """The estimates worth showing: calls to a configured endpoint (the embedded model is free and local)."""
    return [e for e in estimates if e.total.calls and e.model != LOCAL_MODEL]


def money_first(command: str, estimates: Sequence[Estimate], in_flight: dict[str, int], *, yes: bool,
                max_cost: float | None, confirm_above: float, batch: bool = False) -> None:
    """Print the estimate, then go on, ask, or refuse; raises before any call is made. `batch`: the calls go
    through the batch API, so they are priced (and --confirm-above compared) at its rate."""
    lanes = priced_lanes(estimates)
    if not lanes:
        return
    quote = Quote.of(lanes, in_flight, batch=batch)
    if max_cost is not None and quote.unpriced:
        raise ConfigError(f"--max-cost cannot be kept: no price is known for {', '.join(quote.unpriced)} "
                          "(add it to a price table given with --prices FILE)")
    console = Console(stderr=True, soft_wrap=True)
    console.print(first_screen(command, quote), highlight=False, markup=False)
    if max_cost is not None:
        console.print(f"  --max-cost ${max_cost:,.2f} for this command (a re-run counts again from $0): it stops "
                      "cleanly before a call that could pass it",
                      highlight=False, markup=False)
    if yes or quote.known_dollars <= confirm_above:
        return
    total = total_text(quote)
    if not stdin_is_terminal():
        raise ConfigError(f"estimated {total}, above --confirm-above ${confirm_above:,.2f}, and there is no "
                          "terminal to ask on: nothing was sent. Pass --yes to go ahead (--max-cost USD caps it).")
    if not typer.confirm(f"Go ahead and spend {total}?", default=False, err=True):
        # Declining is the user's choice, not a bug: the same status as the refusal without a terminal (exit 1
        # means a bug to report, errors.py).
        console.print("declined: nothing was sent; re-run the same command to be asked again", highlight=False)
        raise typer.Exit(EXIT_STOPPED)


def dry_run_text(estimates: list[Estimate], in_flight: dict[str, int], batch: bool) -> str:
    """The dry run's table, then the expected and upper-bound totals and time of the calls to configured endpoints
    (as the first screen of the real run prints them)."""
    text = render(estimates)
    lanes = priced_lanes(estimates)
    if not lanes:
        return text
    quote = Quote.of(lanes, in_flight, batch=batch)
    return "\n".join([text, f"to configured endpoints: {quote.calls:,} calls, {expected_total(quote)}",
                      time_text(quote).strip()])


def estimate_first(command: str, plan: Callable[[], list[Estimate]], in_flight: dict[str, int], money: Money, *,
                   dry_run: bool, pays: bool, preflight: Mapping[str, EndpointConfig | None] | None = None,
                   prices: Path | None = None, batch: bool = False) -> bool:
    """`--dry-run`: print the plan and return False (the command stops there). A command that `pays` (a configured
    endpoint, not replaying) shows its estimate first and goes on, asks or refuses (`money_first`); True: go on
    (inside `spending_limit(money.max_cost)`). `preflight`: the endpoints the command will preflight (role ->
    endpoint; none with --no-preflight, --replay or --batch), whose tiny calls the estimate counts too; `batch`:
    priced at the batch API's rate (`money_first`)."""
    if not dry_run and not pays:
        return True

    def planned() -> list[Estimate]:
        # the whole plan is built (every prompt rendered and counted): ~30 s for --release's 94,000 calls, so say so
        with step("working out every call this run would make and its cost (nothing is sent yet) ..."):
            if not preflight:
                return plan()
            from howtobench.llm.preflight import with_preflight

            return with_preflight(plan(), preflight, prices)

    if dry_run:
        estimates = planned()
        Console(soft_wrap=True).print(dry_run_text(estimates, in_flight, batch), highlight=False, markup=False)
        return False
    money_first(command, planned(), in_flight, yes=money.yes, max_cost=money.max_cost,
                confirm_above=money.confirm_above, batch=batch)
    return True
