"""Tokens, calls and money: per run and per purpose, from the price table, and estimated before a run.

`estimate()` is what `--dry-run` prints: it counts the calls a run would make and guesses their
tokens from characters (CJK ≈ 1.5 characters per token, other text ≈ 4), with the completion
budget taken from each request's `max_tokens` (or `completion_tokens` when unset). It ignores
retries, re-asks and cache hits, so it errs towards the full price.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from howtobench.config import NestedTooDeep, safe_yaml, yaml_problem
from howtobench.errors import ConfigError
from howtobench.llm.cache import DB_NAME, STOPPED, CallStore
from howtobench.llm.types import ChatRequest, Usage
from howtobench.outputs import read_cause


class Price(BaseModel):
    """USD per million tokens; how the provider caches prompts and what its batch API charges.

    `prompt_cache` names the provider's caching rule (`pricing.CACHE_RULES`: openai, deepseek, none) and
    `batch` the factor its batch API applies to every rate (None: no batch API). See `llm/pricing.py`.
    """

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    prompt_cache: Literal["openai", "deepseek", "none"] = "none"
    batch: float | None = Field(default=None, gt=0, le=1)

    @field_validator("input", "output", "cached_input", "batch", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        """A rate is a number, never `yes` / `true` (a bool is a number to Python); NaN and infinity are refused
        by the fields (a NaN cost never reaches --max-cost)."""
        if isinstance(value, bool):
            raise ValueError(f"must be a number, not {str(value).lower()}")
        return value

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, *, batch: bool = False
             ) -> float:
        """Dollars for one call; `batch` prices it at the batch rate (an error when there is none)."""
        cached = min(cached_tokens, prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        total = (prompt_tokens - cached) * self.input + cached * cached_rate + completion_tokens * self.output
        if batch:
            if self.batch is None:
                raise ConfigError("this model has no batch price (add `batch:` to its price-table entry)")
            total *= self.batch
        return total / 1_000_000


    def at_batch_rate(self) -> Price:
        """This price through the batch API (every rate times `batch`); unchanged when no batch rate is known."""
        factor = self.batch or 1.0
        cached = None if self.cached_input is None else self.cached_input * factor
        return self.model_copy(update={"input": self.input * factor, "output": self.output * factor,
                                       "cached_input": cached, "batch": None})


PriceTable = dict[str, Price]


def _read_table(text: str, origin: str) -> PriceTable:
    """Entries `model: {input: USD, output: USD, ...}`; a bad one is one line naming the model and the field."""
    try:
        raw = safe_yaml(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"bad price table {yaml_problem(exc, origin)}") from exc
    except NestedTooDeep as exc:
        raise ConfigError(f"bad price table {origin}: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"bad price table {origin}: expected one line per model, e.g. my-model: "
                          "{input: 2.5, output: 10.0}")
    entries = list(raw.items())
    table: PriceTable = {}
    for name, entry in entries:
        try:
            table[str(name)] = Price.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(part) for part in err["loc"]) or "entry"
            raise ConfigError(f"bad price table {origin}: {name}: {field}: {err['msg']} (expected e.g. "
                              f"{name}: {{input: 2.5, output: 10.0}}, USD per million tokens)") from None
    return table


def load_prices(extra: Path | None = None) -> PriceTable:
    """The built-in table, with entries of the user's YAML file (same shape) added or overriding."""
    builtin = resources.files("howtobench.llm").joinpath("prices.yaml").read_text(encoding="utf-8")
    table = _read_table(builtin, "(built-in)")
    if extra is not None:
        try:
            table.update(_read_table(extra.read_text(encoding="utf-8"), str(extra)))
        except OSError as exc:
            raise ConfigError(f"cannot read price table {extra}: {read_cause(exc)}") from exc
    return table


def price_for(model: str, table: PriceTable) -> Price | None:
    """Exact name first, else the longest table entry the model name starts with (dated variants)."""
    if model in table:
        return table[model]
    matches = [name for name in table if model.startswith(name)]
    return table[max(matches, key=len)] if matches else None


@dataclass(frozen=True)
class ModelPrice:
    """A model's list price (None: not known), looked up once where its client is built and carried with it: the
    client prices each call's cost and reserves --max-cost from it, a batch transport bounds its batches by it.
    Before, a batch client's factory and the client it opened each read the price table again."""

    model: str
    list_price: Price | None

    @classmethod
    def look_up(cls, model: str, prices: Path | None = None) -> ModelPrice:
        """`model`'s entry in the built-in table, with the user's price table `prices` added (`load_prices`)."""
        return cls(model, price_for(model, load_prices(prices)))

    def billed(self, *, batch_rates: bool) -> Price | None:
        """The rates its calls are billed at: the batch API's for calls sent through it (`batch_rates`)."""
        if self.list_price is None or not batch_rates:
            return self.list_price
        return self.list_price.at_batch_rate()


_NOT_CJK = re.compile("[^\u3000-\u9fff\uac00-\ud7af\uf900-\uffef\U00020000-\U0010ffff]+")


def estimate_tokens(text: str) -> int:
    """Rough token count: CJK characters / 1.5 plus other characters / 4 (no tokenizer needed).

    CJK here: U+3000-9FFF (punctuation, kana, ideographs), Hangul, compatibility forms, and the planes above
    U+20000 (counted with one regex pass over the runs of other text: the benchmark's cost model estimates
    ~50 million characters, and the first screen of a paid run waits for it)."""
    other = sum(map(len, _NOT_CJK.findall(text)))  # runs of other text: a few strings, not one per character
    cjk = len(text) - other
    return round(cjk / 1.5 + (len(text) - cjk) / 4)


DEFAULT_COMPLETION_TOKENS = 1024  # the completion budget of a request without max_tokens


def estimate(requests: Iterable[ChatRequest], price: Price | None, *,
             completion_tokens: int = DEFAULT_COMPLETION_TOKENS, prompts: Iterable[int] | None = None) -> Usage:
    """What the requests would cost if every one were sent once (4 tokens of overhead per message).

    `prompts`: each request's prompt tokens, in order, when the caller has counted them already (the cost model
    counts ~50 million characters for a whole-benchmark plan; counting them once instead of three times matters)."""
    requests = list(requests)
    counted = list(prompts) if prompts is not None else [
        sum(estimate_tokens(m.get("content", "")) + 4 for m in req.messages) for req in requests]
    total = Usage()
    for req, prompt in zip(requests, counted, strict=True):
        out = req.sampling.max_tokens or completion_tokens
        cost = price.cost(prompt, out) if price else 0.0
        total = total + Usage(calls=1, prompt_tokens=prompt, completion_tokens=out, cost_usd=cost)
    return total


@dataclass(frozen=True)
class UsageRow:
    """What one run spent on one purpose, from the call log."""

    run_id: str
    purpose: str
    usage: Usage
    failed: int
    retries: int
    stopped: int = 0  # calls that raised a run-level error (call log status "stopped"): not in `usage`


def usage_from_log(workspace: Path, run_id: str | None = None, prices: Path | None = None) -> list[UsageRow]:
    """Calls, tokens, cost, failures and retries per (run, purpose), oldest run first, from the call log.

    Calls sent to a model without a price (in the built-in table or `prices`) are counted in
    `usage.unpriced_calls`: their cost is unknown, not zero."""
    if not (workspace / DB_NAME).exists():
        raise ConfigError(f"no call log in {workspace} (expected {workspace / DB_NAME})")
    rows = CallStore.report(
        workspace,
        f"SELECT run_id, purpose, SUM(status != '{STOPPED}') AS calls, SUM(from_cache) AS cached_calls, "
        "SUM(prompt_tokens) AS p, SUM(completion_tokens) AS c, SUM(cached_tokens) AS k, SUM(cost_usd) AS cost, "
        f"SUM(status = 'failed') AS failed, SUM(status = '{STOPPED}') AS stopped, "
        "SUM(MAX(attempts - asks, 0)) AS retries, MIN(started_at) AS first, model",
        "GROUP BY run_id, purpose, model ORDER BY first, purpose", run_id)
    table = load_prices(prices)
    merged: dict[tuple[str, str], UsageRow] = {}
    for r in rows:
        unpriced = r["calls"] - r["cached_calls"] if price_for(r["model"], table) is None else 0
        row = UsageRow(
            run_id=r["run_id"], purpose=r["purpose"], failed=r["failed"], retries=r["retries"], stopped=r["stopped"],
            usage=Usage(calls=r["calls"], cached_calls=r["cached_calls"], prompt_tokens=r["p"],
                        completion_tokens=r["c"], cached_tokens=r["k"], cost_usd=r["cost"], unpriced_calls=unpriced),
        )
        before = merged.get((row.run_id, row.purpose))
        merged[(row.run_id, row.purpose)] = row if before is None else UsageRow(
            run_id=row.run_id, purpose=row.purpose, usage=before.usage + row.usage,
            failed=before.failed + row.failed, retries=before.retries + row.retries,
            stopped=before.stopped + row.stopped)
    return list(merged.values())


@dataclass(frozen=True)
class StopRow:
    """One run-level error from the call log: what stopped a run, how often, when first."""

    run_id: str
    purpose: str
    model: str
    error: str
    count: int
    first: str


def stops_from_log(workspace: Path, run_id: str | None = None) -> list[StopRow]:
    """The run-level errors logged (status "stopped"), one row per (run, purpose, model, error), oldest first."""
    rows = CallStore.report(
        workspace, "SELECT run_id, purpose, model, error, COUNT(*) AS n, MIN(started_at) AS first",
        "GROUP BY run_id, purpose, model, error ORDER BY first", run_id, where=f"status = '{STOPPED}'")
    return [StopRow(r["run_id"], r["purpose"], r["model"], r["error"] or "", r["n"], r["first"]) for r in rows]
