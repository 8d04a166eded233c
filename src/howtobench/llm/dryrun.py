"""`--dry-run`: record the calls a step would make, price them, and send nothing.

The step runs its real control flow against a `RecordingClient`, so the plan counts exactly the calls
the code would make (resume rules, weights shared per item, empty writings without calls). The client
answers every request with an explicit failure — never a made-up reply — so no score or writing can
come out of a dry run. Tokens and cost are `accounting.estimate`'s guesses (characters per token, the
completion budget from `max_tokens`): the upper bound. Beside it, the expected figure prices each reply at its
expected size (`llm.expected`: this model's earlier replies in the call log, else a stated typical size).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.llm.accounting import estimate, load_prices, price_for
from howtobench.llm.expected import ReplySizes, basis_text, expected_completions
from howtobench.llm.local import LOCAL_MODEL
from howtobench.llm.pricing import MODES, Mode, call_tokens, completion_budget, mode_costs, prompt_tokens
from howtobench.llm.types import ChatRequest, ChatResult, Usage

NOT_SENT = "dry run: not sent"


def model_name(endpoint: EndpointConfig | None) -> str:
    """The model a call would go to: the endpoint's, else the embedded local model's (not started here)."""
    return endpoint.model if endpoint is not None else LOCAL_MODEL


class RecordingClient:
    """An LLMClient that keeps every request and answers each with a failure (nothing is sent anywhere)."""

    def __init__(self, model: str) -> None:
        self._model = model
        self.requests: list[ChatRequest] = []

    @property
    def model(self) -> str:
        return self._model

    async def chat(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        return ChatResult(ok=False, error=NOT_SENT)


@dataclass
class Estimate:
    """Estimated usage of one model's calls, per purpose ("generation", "weights", "leaf:logic", ...)."""

    role: str
    model: str
    priced: bool
    by_purpose: dict[str, Usage] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    modes: dict[Mode, float | None] = field(default_factory=dict)  # total dollars per pricing mode (llm/pricing.py)
    expected_completion_tokens: int = 0
    """Completion tokens at each reply's expected size (`llm.expected`), not its max_tokens."""
    expected_usd: float | None = None
    """List-price dollars at the expected reply sizes (None: no price), shown first, the upper bound beside it."""
    expected_basis: str = ""
    """Where the expected reply sizes come from, in words."""

    @property
    def total(self) -> Usage:
        return sum(self.by_purpose.values(), Usage())


def price_plan(role: str, model: str, requests: Iterable[ChatRequest], prices: Path | None = None, *,
               sizes: ReplySizes | None = None, typical: Sequence[int | None] | None = None) -> Estimate:
    """Group the requests by purpose and price them at `model`'s rate (no rate known: cost 0, `priced` False): the
    upper bound, and the expected cost at the reply sizes `sizes` (this model's earlier calls) or `typical` (the
    caller's guess per request) give (`llm.expected`)."""
    price = price_for(model, load_prices(prices))
    ordered = list(requests)
    counted = [prompt_tokens(r.messages) for r in ordered]  # once for the three sums below (~50 M characters)
    groups: dict[str, list[int]] = {}
    for k, request in enumerate(ordered):
        groups.setdefault(request.purpose, []).append(k)
    by_purpose = {purpose: estimate([ordered[k] for k in ks], price, prompts=[counted[k] for k in ks])
                  for purpose, ks in sorted(groups.items())}
    modes: dict[Mode, float | None] = {}
    expected = expected_completions(ordered, sizes, typical)
    expected_usd: float | None = None
    if price is not None:  # the calls replayed in the order the step makes them, through the provider's cache
        budget = [completion_budget(r, ceiling=False) for r in ordered]
        modes = mode_costs(price, call_tokens(ordered, budget, counted))
        expected_usd = sum(price.cost(prompt, done) for prompt, done in zip(counted, expected, strict=True))
    return Estimate(role=role, model=model, priced=price is not None, by_purpose=by_purpose, modes=modes,
                    expected_completion_tokens=sum(expected), expected_usd=expected_usd,
                    expected_basis=basis_text(ordered, sizes, typical is not None) if ordered else "")


def _line(label: str, usage: Usage, priced: bool = True) -> str:
    cost = f"~${usage.cost_usd:,.4f}" if priced else "cost unknown"
    calls = "call " if usage.calls == 1 else "calls"  # "1 calls" read as a slip; the column stays aligned
    return (f"  {label:<24} {usage.calls:>7,} {calls}  ~{usage.prompt_tokens:>11,} prompt  "
            f"~{usage.completion_tokens:>10,} completion  {cost}")


def _modes(modes: dict[Mode, float | None]) -> str:
    shown = [f"{mode} ~${modes[mode]:,.4f}" if modes.get(mode) is not None else f"{mode} n/a" for mode in MODES]
    return " · ".join(shown) + " (cached: the provider's prefix cache; batch: its batch API)"


def expected_line(est: Estimate) -> str:
    """The expected figure of one estimate: dollars (or unknown), completion tokens, and their basis."""
    cost = "cost unknown" if est.expected_usd is None else f"~${est.expected_usd:,.2f}"
    return (f"  expected {cost} (~{est.expected_completion_tokens:,} completion tokens: {est.expected_basis}); "
            f"at most {'cost unknown' if not est.priced else f'~${est.total.cost_usd:,.2f}'}, by purpose:")


def render(estimates: list[Estimate]) -> str:
    """The table `--dry-run` prints: per role the expected cost first, then the upper bound per purpose and its
    total, then the grand totals."""
    lines = ["dry run: nothing was sent and nothing was written. Expected: each reply at its expected size; at most: "
             "every reply at its max_tokens (the bound --max-cost and --confirm-above count); tokens estimated "
             "from characters, no cache hits"]
    for est in estimates:
        rate = "" if est.priced else " — no price known for this model: cost unknown (add it with --prices FILE)"
        lines.append(f"{est.role} · {est.model}{rate}")
        if est.total.calls:
            lines.append(expected_line(est))
        lines += [_line(purpose, usage, est.priced) for purpose, usage in est.by_purpose.items()]
        lines.append(_line("total", est.total, est.priced))
        if est.modes:
            lines.append("  by pricing mode: " + _modes(est.modes))
        lines += [f"  note: {note}" for note in est.notes]
    if len(estimates) > 1:
        priced = all(e.priced or not e.total.calls for e in estimates)
        lines.append(_line("ALL", sum((e.total for e in estimates), Usage()), priced).replace("  ALL", "ALL  ", 1))
    return "\n".join(lines)
