"""Our `LLMClient` on top of an inspect_ai `Model`: the judges run unchanged, inspect makes the calls.

The judges build `ChatRequest`s and read `ChatResult`s; this adapter turns a request into inspect chat
messages and a `GenerateConfig` (sampling, the reply schema as a `ResponseSchema`), lets the inspect
model answer (its provider, retries, connection limits and cache), then does what our own client does
with a reply: strip `<think>`, validate the JSON against the request's schema and re-ask with the reason
at most `reasks` times (`structured`'s functions, the same wording). Usage is converted to ours and
priced from our price table when the model is listed there.

Failure rule (as in `llm/client.py`): a reply that stays invalid, a reply cut by the context window and a
provider error carried on the output are writing-level — a `ChatResult(ok=False)` with the raw text, so
the judge records a failed leaf. An exception raised by `Model.generate` (authentication, unreachable
provider after inspect's retries) is run-level: it propagates, inspect marks the sample as errored, and
`inspect eval-retry` resumes it. Nothing is ever turned into a score here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from howtobench.llm import structured
from howtobench.llm.accounting import Price, load_prices, price_for
from howtobench.llm.keys import cache_key, canonical_json
from howtobench.llm.reask import ask_until_accepted
from howtobench.llm.types import ChatRequest, ChatResult, Usage

WEIGHTS_PURPOSE = "weights"


def to_inspect_messages(messages: tuple[dict[str, str], ...] | list[dict[str, str]]) -> list[ChatMessage]:
    """Our role/content dicts as inspect chat messages (system, user, assistant — all a judge sends)."""
    kinds: dict[str, type[ChatMessageSystem | ChatMessageUser | ChatMessageAssistant]] = {
        "system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant,
    }
    out: list[ChatMessage] = []
    for message in messages:
        role = message.get("role", "user")
        if role not in kinds:
            raise ValueError(f"cannot send a {role!r} message through an inspect model")
        out.append(kinds[role](content=message.get("content", "")))
    return out


def generate_config(request: ChatRequest) -> GenerateConfig:
    """Sampling and reply schema of a request, as our client would send them (seed + sample index, as there)."""
    s = request.sampling
    schema = None
    if request.response_schema is not None:
        shape = JSONSchema.model_validate(request.response_schema)  # our validation below uses the full schema
        schema = ResponseSchema(name=request.schema_name, json_schema=shape)
    return GenerateConfig(
        temperature=s.temperature,
        top_p=s.top_p,
        max_tokens=s.max_tokens,
        seed=None if s.seed is None else s.seed + request.sample_index,
        stop_seqs=list(s.stop) if s.stop else None,
        response_schema=schema,
    )


def usage_of(output: ModelOutput, price: Price | None) -> Usage:
    """inspect's usage in our terms: its `input_tokens` leave out cache reads and writes, our prompt count does not."""
    u = output.usage
    if u is None:
        return Usage()
    cached = u.input_tokens_cache_read or 0
    prompt = u.input_tokens + cached + (u.input_tokens_cache_write or 0)
    cost = price.cost(prompt, u.output_tokens, cached) if price else (u.total_cost or 0.0)
    return Usage(prompt_tokens=prompt, completion_tokens=u.output_tokens, cached_tokens=cached, cost_usd=cost)


def output_failure(output: ModelOutput) -> str | None:
    """Why an output holds no usable reply (None when it does): a provider error or the context window."""
    if output.error:
        return f"the judge model answered with an error: {output.error}"
    if output.stop_reason == "model_length":
        return "ContextTooLong: the prompt does not fit the judge model's context window"
    return None


def reasoning_of(output: ModelOutput) -> str | None:
    if not output.choices or isinstance(output.message.content, str):
        return None
    parts = [c.reasoning for c in output.message.content if isinstance(c, ContentReasoning) and c.reasoning]
    return "\n".join(parts) or None


class InspectJudgeClient:
    """An `LLMClient` whose calls go to an inspect model (a model role, or any `get_model(...)`)."""

    def __init__(self, model: Model, *, reasks: int = 2, cache_weights: bool = True,
                 prices: Path | None = None) -> None:
        """`cache_weights` sends the weight negotiation through inspect's cache, without expiry and across
        epochs: J_W depends on the instruction only, so one reply per item is shared by every model judged
        on it, as in `howtobench judge`. Leaf calls follow the eval's own cache setting."""
        self._model = model
        self._reasks = reasks
        self._weights_cache: bool | CachePolicy = CachePolicy(expiry=None, per_epoch=False) if cache_weights else False
        self._price = price_for(model.name, load_prices(prices))

    @property
    def model(self) -> str:
        return str(self._model)

    async def _generate(self, messages: list[ChatMessage], config: GenerateConfig, *, weights: bool) -> ModelOutput:
        """Weights through the shared cache; leaf calls leave `cache` unset, so the eval's own setting applies."""
        if weights:
            return await self._model.generate(messages, config=config, cache=self._weights_cache)
        return await self._model.generate(messages, config=config)

    async def chat(self, request: ChatRequest) -> ChatResult:
        key = cache_key(self.model, request)
        messages, config = to_inspect_messages(request.messages), generate_config(request)
        schema = request.response_schema
        schema_key = canonical_json(schema) if schema is not None else ""
        outputs: list[ModelOutput] = []
        read: dict[int, tuple[str, str | None, dict[str, Any] | None]] = {}  # per output: text, reasoning, data

        async def send(extra: list[dict[str, str]]) -> ModelOutput:
            outputs.append(await self._generate(messages + to_inspect_messages(extra), config,
                                                weights=request.purpose == WEIGHTS_PURPOSE))
            return outputs[-1]

        async def refusal_of(output: ModelOutput) -> tuple[str, str] | None:
            if output_failure(output) is not None:
                return None
            text, think = structured.split_reasoning(output.completion)
            reasoning = "\n".join(r for r in (reasoning_of(output), think) if r) or None
            data, why = structured.parse_reply(text, schema, schema_key) if schema is not None else (None, None)
            read[id(output)] = (text, reasoning, data)
            return None if why is None else (text, why)

        asked = await ask_until_accepted(send, refusal_of, self._reasks)
        output, content = asked.reply, asked.reply.completion
        usage = sum((usage_of(o, self._price) for o in outputs), Usage(calls=1))
        base: dict[str, Any] = {"cache_key": key, "attempts": asked.asks, "usage": usage, "endpoint": self.model}
        failure = output_failure(output)
        if failure is not None:
            return ChatResult(ok=False, error=failure, raw_text=content or None, **base)
        if asked.refusal is not None:
            error = f"BadResponse: no valid reply after {asked.asks} asks (last: {asked.refusal[1]})"
            return ChatResult(ok=False, error=error, raw_text=content, **base)
        text, reasoning, data = read[id(output)]
        return ChatResult(ok=True, text=text, data=data, reasoning=reasoning, raw_text=content, **base)
