"""Money first: what a command will spend, shown before its first call, and a hard stop at `--max-cost`.

`Quote` turns the dry-run estimates of a command (`llm/dryrun.Estimate`, priced by `accounting` /
`pricing`) into the first screen a user sees before a paid run: calls, tokens, dollars and the time at the
configured concurrency, per model — the expected figures first (each reply at its expected size, `llm.expected`),
the upper bound beside them (every reply at its max_tokens: what `--confirm-above` and `--max-cost` count). A model
without a price costs "unknown", never $0.

`Budget` is the spending limit of one command: the client checks it before every call that is not a
cache hit, reserves the call's upper bound (prompt from characters, the completion at its max_tokens) once
the call holds its slot — waiting while the calls in flight may already use up the limit — and adds each
call's accounted cost when its answer is read, so `--max-cost` stops the command with `BudgetExceeded` (a stop
the user set: exit status 5, no row is written for the call it refuses, a re-run resumes) having passed the
limit by at most one call. The limit counts what this command spends (a re-run starts from $0); the calls in
flight when it is reached still finish and are accounted (`concurrency` lets the siblings of a refused call end
by themselves), and the stop line, formatted when printed, gives the figure the call log holds for them.
Through a batch API nothing is accounted until a batch answers, so the batch transport (`llm/batch.py`)
submits only what accounted + the upper-bound estimate of the batches in flight leaves room for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from howtobench.errors import BudgetExceeded
from howtobench.llm.dryrun import Estimate

# Time guesses when nothing better is known: a fixed cost per call plus its completion at a typical decode speed.
SECONDS_PER_CALL = 1.0
TOKENS_PER_SECOND = 50.0


@dataclass(frozen=True)
class Lane:
    """One model's share of a command: its calls, tokens, dollars (None: no price known) and calls in flight."""

    role: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    dollars: float | None
    in_flight: int
    expected: float | None = None  # dollars at the expected reply sizes (see dryrun.Estimate)
    expected_completion_tokens: int | None = None
    preflight_calls: int = 0  # of `calls`: the preflight's one-token probes (one per base URL)

    @property
    def seconds(self) -> float:
        """Upper-bound wall time: every call at its full completion budget, `in_flight` at once."""
        return self._seconds(self.completion_tokens)

    @property
    def expected_seconds(self) -> float:
        """Wall time with each reply at its expected size."""
        expected = self.expected_completion_tokens
        return self._seconds(self.completion_tokens if expected is None else expected)

    def _seconds(self, completion_tokens: int) -> float:
        busy = self.calls * SECONDS_PER_CALL + completion_tokens / TOKENS_PER_SECOND
        return busy / max(1, min(self.in_flight, self.calls or 1))


@dataclass(frozen=True)
class Quote:
    """What a command will spend, lane by lane."""

    lanes: tuple[Lane, ...]
    batch: bool = False  # sent through the batch API: its rate, and answers within the provider's window

    @classmethod
    def of(cls, estimates: Sequence[Estimate], in_flight: dict[str, int], *, batch: bool = False) -> Quote:
        lanes = []
        for est in estimates:
            total = est.total
            share = batch_share(est) if batch else 1.0
            dollars = total.cost_usd * share if est.priced else None
            expected = est.expected_usd * share if est.priced and est.expected_usd is not None else None
            lanes.append(Lane(est.role, est.model, total.calls, total.prompt_tokens, total.completion_tokens,
                              dollars, _in_flight(in_flight, est.role), expected, est.expected_completion_tokens,
                              est.by_purpose["preflight"].calls if "preflight" in est.by_purpose else 0))
        return cls(tuple(lane for lane in lanes if lane.calls), batch)

    @property
    def calls(self) -> int:
        return sum(lane.calls for lane in self.lanes)

    @property
    def known_dollars(self) -> float:
        """The upper bound of the priced lanes: what --confirm-above compares."""
        return sum(lane.dollars or 0.0 for lane in self.lanes)

    @property
    def expected_dollars(self) -> float:
        return sum((lane.expected if lane.expected is not None else lane.dollars) or 0.0 for lane in self.lanes)

    @property
    def unpriced(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(lane.model for lane in self.lanes if lane.dollars is None))

    @property
    def seconds(self) -> float:
        """Lanes of one command run one after the other (writer, then judge)."""
        return sum(lane.seconds for lane in self.lanes)

    @property
    def expected_seconds(self) -> float:
        return sum(lane.expected_seconds for lane in self.lanes)


def batch_share(est: Estimate) -> float:
    """The batch price as a share of the list price for these calls (1 when the model has no batch rate)."""
    listed, batched = est.modes.get("list"), est.modes.get("batch")
    return batched / listed if listed and batched is not None else 1.0


def _in_flight(in_flight: dict[str, int], role: str) -> int:
    """Calls at once for a role; "judge (tow)" falls back on "judge"."""
    return in_flight.get(role, in_flight.get(role.split(" ")[0], 1))


def dollars_text(dollars: float | None, expected: float | None = None) -> str:
    """"expected ~$74.10 (at most ~$465.20)": the expected cost first, the upper bound beside it."""
    if dollars is None:
        return "cost unknown"
    if expected is not None and expected < dollars * 0.95:
        return f"expected ~${expected:,.2f} (at most ~${dollars:,.2f})"
    return f"at most ~${dollars:,.2f}"


def total_text(quote: Quote) -> str:
    """The upper bound in words (what --confirm-above asks about)."""
    known = f"at most ~${quote.known_dollars:,.2f}"
    if not quote.unpriced:
        return known
    unknown = ", ".join(quote.unpriced)
    return f"{known} + unknown ({unknown}: no price; --prices FILE)" if quote.known_dollars else \
        f"unknown ({unknown}: no price; --prices FILE)"


def duration_text(seconds: float) -> str:
    """A rough duration that reads after "at most": "a minute", "~12 min", "~1 h 05 min"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "a minute"
    hours, minutes = divmod(minutes, 60)
    return f"~{hours} h {minutes:02d} min" if hours else f"~{minutes} min"


def expected_total(quote: Quote) -> str:
    """"expected ~$74.10, at most ~$465.20" (the bound alone when nothing is expected below it)."""
    bound = total_text(quote)
    if quote.known_dollars and quote.expected_dollars < quote.known_dollars * 0.95:
        return f"expected ~${quote.expected_dollars:,.2f}, {bound}"
    return bound


def time_text(quote: Quote) -> str:
    """The time line: expected, then at most, at the configured calls in flight (or the batch window)."""
    if quote.batch:
        return "  time: within the provider's batch window (up to 24 h); dollars at its batch rate"
    flight = " / ".join(dict.fromkeys(f"{lane.in_flight} {lane.role.split(' ')[0]}" for lane in quote.lanes))
    expected, bound = duration_text(quote.expected_seconds), duration_text(quote.seconds)
    first = f"expected {expected}, at most {bound}" if expected != bound else f"at most {bound}"
    return (f"  time: {first} with {flight} calls at once (at most: every reply at its max_tokens; "
            f"{TOKENS_PER_SECOND:.0f} tokens/s)")


def first_screen(command: str, quote: Quote) -> str:
    """The lines printed before the first call of a paid command: one block per model, then the total."""
    lines = [f"howtobench {command} — estimate before the first call (nothing has been sent yet)"]
    for lane in quote.lanes:
        if lane.calls == lane.preflight_calls:
            continue  # only the probes: no block of its own (it read as work to do), the preflight line has them
        completion = f"~{lane.completion_tokens:,} completion tokens"
        if lane.expected_completion_tokens is not None and lane.expected_completion_tokens < lane.completion_tokens:
            completion = f"~{lane.expected_completion_tokens:,} (at most ~{lane.completion_tokens:,}) completion tokens"
        calls = f"{lane.calls:,} call{'s' if lane.calls != 1 else ''}"
        lines.append(f"  {lane.role} · {lane.model}: {calls}, ~{lane.prompt_tokens:,} prompt + "
                     f"{completion}")
        lines.append(f"      {dollars_text(lane.dollars, lane.expected)}")
    lines += _preflight_line(quote)
    lines.append(f"  total: {quote.calls:,} call{'s' if quote.calls != 1 else ''}, {expected_total(quote)}")
    lines.append(time_text(quote))
    lines.append("  (expected: each reply at its expected size, see --dry-run for the basis; at most: tokens counted "
                 "from characters, no cache hits, every reply at its max_tokens — what --confirm-above and "
                 "--max-cost count)")
    return "\n".join(lines)


def _preflight_line(quote: Quote) -> list[str]:
    """The preflight's probes as a line of their own: one tiny call per base URL of each endpoint, sent before
    the first item (a lane with nothing else to do had a whole estimate block for them, read as work left)."""
    probes = [lane for lane in quote.lanes if lane.preflight_calls]
    if not probes:
        return []
    count = sum(lane.preflight_calls for lane in probes)
    models = ", ".join(dict.fromkeys(lane.model for lane in probes))
    return [f"  preflight: {count:,} one-token call{'s' if count != 1 else ''} ({models}), one per base URL, "
            "to check each endpoint before the first item (in its model's calls above, if listed, and in the total)"]


# ------------------------------------------------------------------ the spending limit


RESERVE_POLL_S = 0.02  # how often a call waiting for room under --max-cost looks again


class LimitReached(BudgetExceeded):
    """`BudgetExceeded` whose line gives the figure when it is printed, not when it was raised: the calls in flight
    at the stop finish first (and are accounted and logged), so the line and the call log agree."""

    def __init__(self, budget: Budget) -> None:
        super().__init__()
        self.budget = budget

    def __str__(self) -> str:
        b = self.budget
        return (f"--max-cost ${b.limit:,.2f} reached: this command's calls cost ${b.spent:,.4f} (what the call log "
                "holds for them; the limit counts per command, so a re-run starts again from $0); stopped before "
                "the next call. Finished work is saved: run the same command again to resume (a higher --max-cost "
                "lets it go further)")


@dataclass
class Budget:
    """A spending limit in dollars, what has been accounted against it so far, and what the calls in flight may
    still cost (`reserved`: each call's upper bound, held from before it is sent until its answer is charged)."""

    limit: float
    spent: float = 0.0
    reserved: float = 0.0

    def check(self) -> None:
        """Raise `BudgetExceeded` once the accounted cost has reached the limit."""
        if self.spent >= self.limit:
            raise LimitReached(self)

    async def reserve(self, bound: float) -> float:
        """Hold `bound` dollars for a call about to be sent; wait while the calls in flight may already use up the
        limit, and raise once the accounted cost reached it. So the limit is passed by at most one call's cost."""
        while self.spent + self.reserved >= self.limit:
            self.check()
            await asyncio.sleep(RESERVE_POLL_S)
        self.reserved += bound
        return bound

    def release(self, bound: float) -> None:
        self.reserved = max(0.0, self.reserved - bound)

    def add(self, dollars: float) -> None:
        self.spent += dollars


_ACTIVE: ContextVar[Budget | None] = ContextVar("howtobench_budget", default=None)


@contextmanager
def spending_limit(limit: float | None) -> Iterator[Budget | None]:
    """Every model call made inside (in this task and the tasks it starts) counts against `limit` dollars."""
    if limit is None:
        yield None
        return
    budget = Budget(limit)
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)


def check_budget() -> None:
    """Called by the client before a call that will be sent (cache hits are free and always allowed)."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.check()


def active_budget() -> Budget | None:
    """The spending limit of the running command, if any (the batch transport reserves against it)."""
    return _ACTIVE.get()


async def reserve(bound: float) -> float:
    """Hold a call's upper-bound cost before it is sent (see `Budget.reserve`); returns what to `release`."""
    budget = _ACTIVE.get()
    return 0.0 if budget is None else await budget.reserve(bound)


def release(bound: float) -> None:
    budget = _ACTIVE.get()
    if budget is not None and bound:
        budget.release(bound)


def charge(dollars: float) -> None:
    """Called by the client with the accounted cost of each call it sent."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.add(dollars)
