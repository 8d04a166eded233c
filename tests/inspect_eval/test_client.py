"""InspectJudgeClient: our client protocol on an inspect model (usage, prices, failures, re-asks, sampling)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra installs inspect_ai")

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolChoice, ToolInfo

from howtobench.inspect_eval.client import InspectJudgeClient, generate_config, output_failure, usage_of
from howtobench.llm.accounting import Price
from howtobench.llm.client import cache_key
from howtobench.llm.types import ChatRequest, SamplingParams

SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "enum": [1, 2, 3]}}, "required": ["score"]}
REQUEST = ChatRequest(messages=({"role": "system", "content": "s"}, {"role": "user", "content": "u"}),
                      sampling=SamplingParams(temperature=0.7, max_tokens=64, seed=5), response_schema=SCHEMA,
                      schema_name="leaf_score", purpose="leaf:logic", sample_index=2)


def test_usage_counts_cache_reads_as_prompt_tokens_and_prices_them() -> None:
    out = ModelOutput.from_content("m", "x")
    out.usage = ModelUsage(input_tokens=1000, output_tokens=100, input_tokens_cache_read=3000)
    usage = usage_of(out, Price(input=2.5, cached_input=1.25, output=10))
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (4000, 3000, 100)
    assert usage.cost_usd == (1000 * 2.5 + 3000 * 1.25 + 100 * 10) / 1e6


def test_sampling_and_schema_go_into_the_generate_config() -> None:
    config = generate_config(REQUEST)
    assert (config.temperature, config.max_tokens, config.seed) == (0.7, 64, 7)  # seed + sample index, as ours
    assert config.response_schema is not None and config.response_schema.name == "leaf_score"
    assert config.response_schema.json_schema.properties["score"].enum == [1, 2, 3]  # type: ignore[index]


def test_context_overflow_and_provider_errors_are_failures() -> None:
    assert "ContextTooLong" in str(output_failure(ModelOutput.from_content("m", "", stop_reason="model_length")))
    assert "overloaded" in str(output_failure(ModelOutput.from_content("m", "", error="overloaded")))
    assert output_failure(ModelOutput.from_content("m", '{"score": 1}')) is None


async def test_invalid_replies_are_re_asked_then_fail_with_the_raw_text() -> None:
    seen: list[list[str]] = []
    replies = iter(['<think>hmm</think>{"score": 9}', "no json", '{"score": 3}'])

    def answer(messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
               config: GenerateConfig) -> ModelOutput:
        seen.append([m.text for m in messages])
        out = ModelOutput.from_content("m", next(replies))
        out.usage = ModelUsage(input_tokens=10, output_tokens=2)
        return out

    client = InspectJudgeClient(get_model("mockllm/judge", custom_outputs=answer), reasks=2)
    result = await client.chat(REQUEST)
    assert result.ok and result.data == {"score": 3} and result.attempts == 3
    assert result.usage.calls == 1 and result.usage.prompt_tokens == 30
    assert result.cache_key == cache_key("mockllm/judge", REQUEST)
    # the second ask carries the first reply (reasoning stripped) and why it was refused
    assert seen[1][2] == '{"score": 9}' and "9 is not one of [1, 2, 3]" in seen[1][3]

    replies = iter(["nope", "still no", "never"])
    failed = await InspectJudgeClient(get_model("mockllm/judge", custom_outputs=answer), reasks=2).chat(REQUEST)
    assert not failed.ok and failed.raw_text == "never" and "no valid reply after 3 asks" in (failed.error or "")
