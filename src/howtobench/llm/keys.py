"""Cache keys: what determines a model's reply, hashed — never timeouts, retries, concurrency or the URL.

The key of a call is the sha256 of the canonical JSON (keys sorted, compact, UTF-8) of the model, the messages,
the sampling, the response schema and its name, the template version and the sample index; the key of one ask
of a call adds the re-ask messages that follow the first ask. tests/llm/test_llm_client.py pins keys: a change
here would orphan every cached call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from howtobench.llm.types import ChatRequest

# Built once: json.dumps with non-default options constructs a new JSONEncoder on every call (~4 us each,
# twice per model call). Same options, same output.
CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_json(value: Any) -> str:
    return CANONICAL.encode(value)


def messages_json(request: ChatRequest) -> str:
    """The canonical JSON of a request's messages: the long part of both its cache key and its body."""
    return CANONICAL.encode(list(request.messages))


def json_object(fields: Iterable[tuple[str, str]]) -> str:
    """A JSON object from (key, value already encoded as JSON) pairs, in the order given."""
    return "{" + ",".join(f"{CANONICAL.encode(key)}:{value}" for key, value in fields) + "}"


def cache_key(model: str, request: ChatRequest, messages: str | None = None) -> str:
    """sha256 of what determines the reply.

    Put together from each field's own encoding, in sorted key order, so the messages — a judge prompt holds the
    whole writing and reference — are encoded once for both the key and the body (`messages`: their
    `messages_json`).
    """
    fields = (
        ("messages", messages if messages is not None else messages_json(request)),
        ("model", CANONICAL.encode(model)),
        ("response_schema", CANONICAL.encode(request.response_schema)),
        ("sample_index", CANONICAL.encode(request.sample_index)),
        ("sampling", CANONICAL.encode(request.sampling.model_dump(mode="json"))),
        ("schema_name", CANONICAL.encode(request.schema_name)),
        ("template_version", CANONICAL.encode(request.template_version)),
    )
    return hashlib.sha256(json_object(fields).encode()).hexdigest()


def ask_key(key: str, extra: list[dict[str, str]]) -> str:
    """The key of one ask of a call: its cache key and the re-ask messages that follow the first ask."""
    return hashlib.sha256((key + canonical_json(extra)).encode()).hexdigest()
