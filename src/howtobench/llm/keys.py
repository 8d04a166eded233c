"""Cache keys: what determines a model's reply, hashed — never timeouts, retries, concurrency or the URL.

The key of a call is the sha256 of the canonical JSON (keys sorted, compact, UTF-8) of the model, the messages,
the sampling, the response schema and its name, the template version and the sample index; the key of one ask
of a call adds the re-ask messages that follow the first ask. tests/llm/test_llm_client.py pins keys: a change
here would orphan every cached call.
"""

from __future__ import annotations

import hashlib
import json
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


def cache_key(model: str, request: ChatRequest, messages: str | None = None, messages_utf8: bytes | None = None,
              schema_json: str | None = None) -> str:
    """sha256 of what determines the reply: the canonical JSON of its fields, in sorted key order.

    The messages — a judge prompt holds the whole writing and reference — are encoded once for both the key and the
    body: `messages` is their `messages_json`, `messages_utf8` its UTF-8 bytes (hashed as given, so they must be
    exactly `messages.encode()`); `schema_json` is the response schema's `canonical_json` (the client validates
    replies under it too). "messages" sorts first, then "model" and "response_schema", so the key's text is
    `{"messages":` + the messages + those two + the other fields encoded as one object (one encoder call, not one
    per field), hashed piece by piece.
    """
    if schema_json is None:
        schema_json = CANONICAL.encode(request.response_schema)
    rest = CANONICAL.encode({
        "sample_index": request.sample_index, "sampling": request.sampling.model_dump(mode="json"),
        "schema_name": request.schema_name, "template_version": request.template_version,
    })
    if messages_utf8 is None:
        messages_utf8 = (messages if messages is not None else messages_json(request)).encode()
    digest = hashlib.sha256(b'{"messages":')
    hash_holding_the_gil(digest, messages_utf8)
    digest.update(f',"model":{CANONICAL.encode(model)},"response_schema":{schema_json},{rest[1:]}'.encode())
    return digest.hexdigest()


GIL_KEPT_BELOW = 2048  # hashlib hashes a shorter input without releasing the GIL (CPython's HASHLIB_GIL_MINSIZE)


def hash_holding_the_gil(digest: Any, data: bytes) -> None:
    """`digest.update(data)`, in pieces too short for hashlib to release the GIL: the same digest.

    Why: the loop thread hashes every call's messages (~13 KB for a ToW leaf, ~10 us). Given the whole buffer,
    hashlib lets go of the GIL for those microseconds; the call log's writer thread, waiting for it, takes it, and
    the loop then waits to get it back — measured ~40 us a call on a busy 2-core machine, four times the hash.
    """
    view = memoryview(data)
    for start in range(0, len(view), GIL_KEPT_BELOW - 1):
        digest.update(view[start:start + GIL_KEPT_BELOW - 1])


def ask_key(key: str, extra: list[dict[str, str]]) -> str:
    """The key of one ask of a call: its cache key and the re-ask messages that follow the first ask."""
    return hashlib.sha256((key + canonical_json(extra)).encode()).hexdigest()
