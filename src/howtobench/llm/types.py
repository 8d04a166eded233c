"""The contract between everything that needs a model and the one client layer.

Judges, the generator, perturbations and the construction pipeline build a `ChatRequest`
and await `LLMClient.chat`. They never see HTTP, retries or the cache. A call that fails
comes back as a `ChatResult` with `ok=False` and the raw text: callers record it, they
never invent a value in its place.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field


class SamplingParams(BaseModel):
    """Sampling settings; part of the cache key."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None


class ChatRequest(BaseModel):
    """One chat completion to make.

    `response_schema` is a JSON schema the reply must satisfy (express scales as enums so
    grammar-constrained servers cannot leave them). `purpose` labels the call for
    accounting ("generation", "weights", "leaf:logic", ...). `template_version` is the hash
    of the prompt template, so editing a prompt invalidates exactly its cached calls.
    `sample_index` separates the n samples of a self-consistency run in the cache.
    """

    model_config = ConfigDict(frozen=True)

    messages: tuple[dict[str, str], ...]
    sampling: SamplingParams = SamplingParams()
    response_schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    purpose: str = "other"
    template_version: str = ""
    sample_index: int = 0


class Usage(BaseModel):
    """Token and call accounting; adds up across calls."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # completions of a model without a price: their cost is unknown, not part of cost_usd

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})

    def cost_text(self) -> str:
        """Dollars for display: "unknown" when any call had no price (never a misleading $0)."""
        if not self.unpriced_calls:
            return f"${self.cost_usd:.4f}"
        return f"${self.cost_usd:.4f} + unknown" if self.cost_usd else "cost unknown"


class ChatResult(BaseModel):
    """The outcome of one request: a reply or an explicit failure, never a guess."""

    ok: bool
    text: str | None = None
    data: dict[str, Any] | None = None
    reasoning: str | None = None
    error: str | None = None
    raw_text: str | None = None
    # the server's reason for stopping ("stop", "length", "content_filter", ...; None when it gave none):
    # a reply cut by max_tokens or a filter is not a finished writing
    finish_reason: str | None = None
    cache_key: str = ""
    from_cache: bool = False
    attempts: int = 0
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    endpoint: str | None = None


class LLMClient(Protocol):
    """What every caller of a model depends on."""

    @property
    def model(self) -> str: ...

    async def chat(self, request: ChatRequest) -> ChatResult: ...
