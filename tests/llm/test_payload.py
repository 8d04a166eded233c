"""The request body and cache key built from the messages encoded once (`Payload`, `cache_key` with their bytes)."""

from __future__ import annotations

from typing import Any

import pytest
from llm_helpers import SCORE_SCHEMA, req

from howtobench.config import EndpointConfig
from howtobench.llm.keys import CANONICAL, cache_key, messages_json
from howtobench.llm.types import SamplingParams
from howtobench.llm.wire import BODY_JSON, Payload, request_body

TEXT = "请写一首诗\n\"引号\"\t\\ \u0001 é 🙂 <<<>>>"


def field_by_field(body: dict[str, Any], messages: str) -> str:
    """The body text as the call log has always stored it: each field encoded on its own, the messages canonical."""
    return "{" + ",".join(f"{CANONICAL.encode(key)}:{messages if key == 'messages' else BODY_JSON.encode(value)}"
                          for key, value in body.items()) + "}"


@pytest.mark.parametrize("body", [
    {"messages": []},  # nothing before the messages, nothing after
    {"model": "m", "messages": []},  # nothing after
    {"messages": [], "temperature": 0.0},  # nothing before
    {"model": "m", "messages": [], "temperature": 0.7, "max_tokens": 4096, "stop": ["END"],
     "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": SCORE_SCHEMA}}},
])
def test_body_around_the_encoded_messages_is_the_field_by_field_text(body: dict[str, Any]) -> None:
    request = req(TEXT)
    messages = messages_json(request)
    full = {**body, "messages": [dict(m) for m in request.messages]}
    expected = field_by_field(full, messages)
    assert Payload(lambda: full, messages).text() == expected
    assert Payload(lambda: full, messages, messages.encode()).encoded() == expected.encode()
    assert Payload(lambda: full, messages).encoded() == expected.encode()


def test_real_request_body_is_unchanged() -> None:
    endpoint = EndpointConfig(model="judge", base_urls=("http://127.0.0.1:1/v1",))
    request = req(TEXT, sampling=SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, seed=3, stop=("x",)),
                  response_schema=SCORE_SCHEMA, sample_index=2)
    messages = messages_json(request)
    payload = Payload(lambda: request_body(endpoint, request), messages, messages.encode())
    assert payload.encoded() == field_by_field(request_body(endpoint, request), messages).encode()
    assert payload.text() == payload.encoded().decode()


def test_cache_key_from_the_messages_bytes_is_the_same_key() -> None:
    request = req(TEXT, response_schema=SCORE_SCHEMA, template_version="v", sample_index=1)
    messages = messages_json(request)
    assert cache_key("m", request, messages, messages.encode()) == cache_key("m", request, messages) \
        == cache_key("m", request)
    schema_json = CANONICAL.encode(SCORE_SCHEMA)
    assert cache_key("m", request, messages, messages.encode(), schema_json) == cache_key("m", request)
    plain = req(TEXT)
    assert cache_key("m", plain, schema_json="null") == cache_key("m", plain)
