"""What calls cost under each way of paying for them: list price, prompt caching, batch, batch + caching.

Providers bill the part of a prompt they serve from their prefix cache at a lower rate, and their batch APIs
halve every rate. Which part is cached follows the provider's rule (`CACHE_RULES`, named by a price-table
entry's `prompt_cache`):

    openai    a prefix shared with an earlier request is cached once the prompt reaches 1,024 tokens, in
              steps of 128 tokens (1,024, 1,152, 1,280, ...), billed at `cached_input`
    deepseek  the shared prefix is served from the disk cache in 64-token units, billed at `cached_input`
              (DeepSeek's "cache hit" rate)
    none      nothing is cached (self-hosted servers, unknown providers)

`PrefixCache` replays requests in the order they are sent and finds, for each, the longest prefix it shares
with any earlier request (the lexicographic neighbours of a sorted set hold the longest common prefix). It
assumes every earlier prompt is still cached — true for a judge that sends the calls of one writing together,
an upper bound on hits across hours. Token counts are `accounting.estimate_tokens`'s character estimates.

A model's `batch` entry is the factor its batch API applies to every rate (0.5 for OpenAI); no entry means
the provider has no batch API and the batch modes show no price. Batch and cache discounts stack.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from howtobench.llm.accounting import DEFAULT_COMPLETION_TOKENS, Price, estimate_tokens
from howtobench.llm.types import ChatRequest, Usage

Mode = Literal["list", "cached", "batch", "batch+cached"]
MODES: tuple[Mode, ...] = ("list", "cached", "batch", "batch+cached")
MESSAGE_OVERHEAD = 4  # tokens a chat template adds around each message (as `accounting.estimate` counts them)


@dataclass(frozen=True)
class CacheRule:
    """The shortest prefix a provider caches and the step in which cached lengths grow."""

    min_tokens: int
    step: int

    def cached(self, shared_tokens: int) -> int:
        """Tokens billed as cached when `shared_tokens` of the prompt repeat an earlier prompt's prefix."""
        if shared_tokens < self.min_tokens:
            return 0
        return self.min_tokens + (shared_tokens - self.min_tokens) // self.step * self.step


CACHE_RULES: dict[str, CacheRule | None] = {
    "openai": CacheRule(min_tokens=1024, step=128),
    "deepseek": CacheRule(min_tokens=64, step=64),
    "none": None,
}


def prompt_text(messages: Sequence[dict[str, str]]) -> str:
    """The prompt as one string whose prefixes are the request's prefixes (role and content, in order)."""
    return "".join(f"\x00{m.get('role', '')}\x01{m.get('content', '')}" for m in messages)


def prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
    return sum(estimate_tokens(m.get("content", "")) + MESSAGE_OVERHEAD for m in messages)


def body_bound_usd(price: Price, body: dict[str, Any]) -> float:
    """Dollars a chat-completion body may cost at most at `price`: its prompt tokens from characters, the
    completion at its max_tokens (or max_completion_tokens), no cache hits. What --max-cost reserves per call."""
    completion = body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_COMPLETION_TOKENS
    return price.cost(prompt_tokens(body.get("messages") or []), int(completion))


def shared_tokens(messages: Sequence[dict[str, str]], shared_chars: int) -> int:
    """Tokens of the first `shared_chars` characters of `prompt_text(messages)`: whole messages with their
    overhead, then the shared start of the message where the prompts part."""
    total, left = 0, shared_chars
    for m in messages:
        head = len(m.get("role", "")) + 2
        content = m.get("content", "")
        if left < head + len(content):
            return total + estimate_tokens(content[: max(0, left - head)])
        total += estimate_tokens(content) + MESSAGE_OVERHEAD
        left -= head + len(content)
    return total


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (binary search on slice equality: C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class PrefixCache:
    """The prompts sent so far; `admit` says how many characters of a new prompt an earlier one shares."""

    def __init__(self) -> None:
        self._sorted: list[str] = []

    def admit(self, text: str) -> int:
        at = bisect.bisect_left(self._sorted, text)
        shared = max((_common_prefix(text, self._sorted[k]) for k in (at - 1, at) if 0 <= k < len(self._sorted)),
                     default=0)
        if at == len(self._sorted) or self._sorted[at] != text:
            self._sorted.insert(at, text)
        return shared


@dataclass(frozen=True)
class CallTokens:
    """One call's tokens: prompt, completion, and the prompt tokens each cache rule would serve from its cache."""

    prompt: int
    completion: int
    cached: dict[str, int]


def call_tokens(requests: Iterable[ChatRequest], completion: Iterable[int],
                prompts: Iterable[int] | None = None) -> list[CallTokens]:
    """Replay `requests` in order through one prefix cache; `completion` gives each call's completion tokens and
    `prompts` its prompt tokens when the caller counted them already (else they are counted here)."""
    requests = list(requests)
    counted = list(prompts) if prompts is not None else [prompt_tokens(r.messages) for r in requests]
    cache = PrefixCache()
    out = []
    for request, done, prompt in zip(requests, completion, counted, strict=True):
        messages = request.messages
        shared = shared_tokens(messages, cache.admit(prompt_text(messages)))
        cached = {name: rule.cached(shared) if rule else 0 for name, rule in CACHE_RULES.items()}
        out.append(CallTokens(prompt=prompt, completion=done, cached=cached))
    return out


JSON_TOKENS_PER_FIELD = 4  # quotes, colon, comma and spacing around one object member, as tokens


def reply_ceiling(schema: dict[str, Any], text_chars: int | None = None) -> int | None:
    """The most tokens a reply valid under `schema` can take, or None when the schema sets no bound.

    Strings count `maxLength` characters as CJK (1.5 per token: the longest case), integers and numbers a few
    tokens, arrays `maxItems` items. An upper bound for the visible reply of a judge that does not reason
    aloud; a reasoning model bills hidden tokens on top, so use `max_tokens` for those. With `text_chars`,
    every string is that long instead (at most its maxLength): a typical reply for a judge whose reasons run
    about that many characters.
    """
    kind = schema.get("type")
    if "enum" in schema:
        return max(estimate_tokens(str(v)) for v in schema["enum"]) + 1
    if kind == "object" or "properties" in schema:
        parts = [reply_ceiling(sub, text_chars) for sub in schema.get("properties", {}).values()]
        if any(p is None for p in parts):
            return None
        keys = sum(estimate_tokens(k) for k in schema.get("properties", {}))
        return 2 + keys + sum(p or 0 for p in parts) + JSON_TOKENS_PER_FIELD * len(parts)
    if kind == "array":
        item = reply_ceiling(schema.get("items", {}), text_chars)
        most = schema.get("maxItems")
        return None if item is None or most is None else 2 + most * (item + 1)
    if kind == "string":
        most = schema.get("maxLength")
        if text_chars is not None:
            most = text_chars if most is None else min(most, text_chars)
        return None if most is None else math.ceil(most / 1.5) + 2
    if kind in ("integer", "number", "boolean", "null"):
        return 8
    return None


def completion_budget(request: ChatRequest, *, ceiling: bool, text_chars: int | None = None) -> int:
    """A call's completion tokens for pricing: its `max_tokens` (the default), or with `ceiling` the reply
    schema's bound (`reply_ceiling`, with `text_chars`) when that is lower."""
    budget = request.sampling.max_tokens or DEFAULT_COMPLETION_TOKENS
    if ceiling and request.response_schema is not None:
        bound = reply_ceiling(request.response_schema, text_chars)
        if bound is not None:
            return min(budget, bound)
    return budget


def _batch(mode: Mode) -> bool:
    return mode.startswith("batch")


def _cached(mode: Mode) -> bool:
    return mode.endswith("cached")


def mode_costs(price: Price, calls: Sequence[CallTokens]) -> dict[Mode, float | None]:
    """Dollars of the calls in every mode; None for the batch modes of a model without a batch API."""
    out: dict[Mode, float | None] = {}
    for mode in MODES:
        if _batch(mode) and price.batch is None:
            out[mode] = None
            continue
        out[mode] = sum(price.cost(c.prompt, c.completion, c.cached[price.prompt_cache] if _cached(mode) else 0,
                                   batch=_batch(mode)) for c in calls)
    return out


def logged_mode_costs(price: Price, usage: Usage) -> dict[Mode, float | None]:
    """The modes for calls already made: "cached" uses the cached tokens the server reported."""
    calls = [CallTokens(prompt=usage.prompt_tokens, completion=usage.completion_tokens,
                        cached={price.prompt_cache: usage.cached_tokens})]
    return mode_costs(price, calls)


def modes_from_log(workspace: Path, run_id: str | None = None, prices: Path | None = None
                   ) -> dict[tuple[str, str], dict[Mode, float | None]]:
    """What the logged calls of each (run, purpose) cost in every mode, from their tokens and the server's
    cached-token counts. None where the cost is not known: a mode one of the models lacks (no batch API), or tokens
    sent to a model without a price (unknown, never $0, as `usage_from_log` counts them)."""
    from howtobench.llm.accounting import load_prices, price_for
    from howtobench.llm.cache import CallStore

    table = load_prices(prices)
    rows = CallStore.report(
        workspace, "SELECT run_id, purpose, model, SUM(prompt_tokens) AS p, SUM(completion_tokens) AS c, "
        "SUM(cached_tokens) AS k", "GROUP BY run_id, purpose, model", run_id)
    out: dict[tuple[str, str], dict[Mode, float | None]] = {}
    for r in rows:
        price = price_for(r["model"], table)
        if price is None:
            costs: dict[Mode, float | None] = dict.fromkeys(MODES, None if r["p"] or r["c"] else 0.0)
        else:
            costs = logged_mode_costs(price, Usage(prompt_tokens=r["p"], completion_tokens=r["c"],
                                                   cached_tokens=r["k"]))
        spent = out.setdefault((r["run_id"], r["purpose"]), dict.fromkeys(MODES, 0.0))
        for mode in MODES:
            before, more = spent[mode], costs[mode]
            spent[mode] = None if before is None or more is None else before + more
    return out
