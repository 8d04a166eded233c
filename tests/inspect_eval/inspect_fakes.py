"""inspect's mockllm as our fake judge and writer (the replies are `judge_replies`'s), for the inspect tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolChoice, ToolInfo

from judge_replies import first_user, judge_reply, leaf_score, schema_of, server_handler, weights_for, writing_of

__all__ = ["first_user", "leaf_score", "mock_judge", "mock_writer", "schema_of", "server_handler", "weights_for"]


def as_request(messages: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
    """What our fake server would receive for these inspect messages and config (messages + response_format)."""
    request: dict[str, Any] = {"messages": [{"role": m.role, "content": m.text} for m in messages]}
    if config.response_schema is not None:
        schema = config.response_schema.json_schema.model_dump(exclude_none=True)
        request["response_format"] = {"type": "json_schema",
                                      "json_schema": {"name": config.response_schema.name, "schema": schema}}
    return request


def _output(model: str, content: str) -> ModelOutput:
    out = ModelOutput.from_content(model, content)
    # set usage: mockllm otherwise counts tokens with tiktoken, which downloads its encoding (no network here)
    out.usage = ModelUsage(input_tokens=1000, output_tokens=50, total_tokens=1050, input_tokens_cache_read=200)
    return out


def mock_judge(reply: Callable[[dict[str, Any]], dict[str, Any] | str] = judge_reply) -> Model:
    """A mockllm judge answering with `reply(request)` (a dict is sent as JSON, a str as is)."""

    def generate(messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                 config: GenerateConfig) -> ModelOutput:
        answer = reply(as_request(messages, config))
        return _output("mockllm/judge", answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False))

    return get_model("mockllm/judge", custom_outputs=generate)


def writing_for(messages: list[ChatMessage]) -> str:
    return writing_of(messages[-1].text)


def mock_writer(write: Callable[[list[ChatMessage]], str] = writing_for) -> Model:
    def generate(messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                 config: GenerateConfig) -> ModelOutput:
        return _output("mockllm/writer", write(messages))

    return get_model("mockllm/writer", custom_outputs=generate)
