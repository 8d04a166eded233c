"""The OpenAI wire dialect: what goes into a chat-completions request and what comes out of its reply.

The one place a provider quirk lives: `max_completion_tokens` instead of `max_tokens` (OpenAI's o-series and
newer), how JSON is asked for (`json_schema`, or `json_object` with the schema told in the prompt: DeepSeek,
Ollama; also inside `response_format` for llama-cpp-python's server), the seed moved per sample, where a
reasoning trace comes back (`reasoning_content`: DeepSeek; `reasoning`: vLLM, Ollama), where prompt-cache hits are
counted (`prompt_tokens_details.cached_tokens`: OpenAI; `prompt_cache_hit_tokens`: DeepSeek), an error shaped
`{"error": {"message": ...}}`, a base URL whose query (Azure's `?api-version=`) stays after the path, and the
named provider profiles (`PROVIDERS`: each server's base URL, key variable, JSON mode and concurrency).
Nothing here sends anything: `llm/attempts.py` sends, `llm/client.py` caches and logs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.llm import structured
from howtobench.llm.accounting import Price
from howtobench.llm.types import ChatRequest, Usage
from howtobench.redact import MASK, redact_text, redact_url
from howtobench.suggest import unknown_name

# Bodies are compact JSON: servers read any JSON. Built once (see keys.CANONICAL).
BODY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass
class Answer:
    """The outcome of one ask (one completion, after its HTTP retries)."""

    ok: bool
    content: str = ""
    reasoning: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    attempts: int = 0
    endpoint: str | None = None
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False  # the task was cancelled after this answer was read: log it, then stop


class Payload:
    """The JSON body of one ask, built and serialised on first use, then kept.

    Why lazy: callers gather thousands of `chat()` calls at once, and each runs up to its first
    wait for a slot before any request leaves. Building every body there kept the first
    connections waiting (~0.3 s of dead time for 3000 queued calls in bench/throughput.py); now
    a call builds its body only once it holds a slot, so queued calls cost only their cache key.
    """

    def __init__(self, build: Callable[[], dict[str, Any]], messages_text: str | None = None,
                 messages_utf8: bytes | None = None) -> None:
        self._build = build
        self._messages_text = messages_text  # the body's messages already encoded (the cache key's), if sent as is
        self._messages_utf8 = messages_utf8  # and their UTF-8 bytes (exactly `messages_text.encode()`), if known
        self._body: dict[str, Any] | None = None
        self._around: tuple[str, str] | None = None
        self._text: str | None = None
        self._bytes: bytes | None = None

    @classmethod
    def reask(cls, first: Payload, extra: list[dict[str, str]]) -> Payload:
        """The first ask's body with the re-ask messages appended (copied now: `extra` grows later)."""
        body = first.body()
        messages = body["messages"] + extra
        return cls(lambda: {**body, "messages": messages})

    def body(self) -> dict[str, Any]:
        if self._body is None:
            self._body = self._build()
        return self._body

    def text(self) -> str:
        """What the call log stores: the body sent, no headers (so no key)."""
        if self._text is None:
            messages = self._messages_text
            if messages is None:
                self._text = BODY_JSON.encode(self.body())
            else:
                head, tail = self._around_messages()
                self._text = head + messages + tail
        return self._text

    def encoded(self) -> bytes:
        """The body's bytes; the messages' own bytes reused when given (the cache key hashed them already)."""
        if self._bytes is None:
            if self._messages_utf8 is not None and self._messages_text is not None:
                head, tail = self._around_messages()
                self._bytes = b"".join((head.encode(), self._messages_utf8, tail.encode()))
            else:
                self._bytes = self.text().encode()
        return self._bytes

    def _around_messages(self) -> tuple[str, str]:
        """The body's JSON text before and after the messages' value (the fields on each side encoded in one call):
        `head + messages_text + tail` is `BODY_JSON.encode(body)` with the messages as the cache key encoded them."""
        if self._around is None:
            body = self.body()
            keys = list(body)
            at = keys.index("messages")
            head = BODY_JSON.encode({key: body[key] for key in keys[:at]})[:-1]  # "{...", no closing brace
            tail = BODY_JSON.encode({key: body[key] for key in keys[at + 1:]})[1:]  # "...}", no opening brace
            self._around = (head + ("," if at else "") + '"messages":', ("," if tail != "}" else "") + tail)
        return self._around


def adds_schema_instruction(endpoint: EndpointConfig, request: ChatRequest) -> bool:
    """A schema the server will not enforce (not `json_schema` mode) is also told to the model in the prompt."""
    return request.response_schema is not None and endpoint.response_format != "json_schema"


def request_body(endpoint: EndpointConfig, request: ChatRequest) -> dict[str, Any]:
    """The JSON body sent to the server (what the log stores: no headers, so no key)."""
    messages = [dict(m) for m in request.messages]
    body: dict[str, Any] = {"model": endpoint.model, "messages": messages}
    s = request.sampling
    body["temperature"] = s.temperature
    for name, value in (("top_p", s.top_p), ("stop", list(s.stop) if s.stop else None)):
        if value is not None:
            body[name] = value
    if s.seed is not None:
        body["seed"] = s.seed + request.sample_index  # distinct yet reproducible samples
    if s.max_tokens is not None:
        body["max_completion_tokens" if endpoint.use_max_completion_tokens else "max_tokens"] = s.max_tokens
    if request.response_schema is not None:
        fmt = structured.response_format(endpoint.response_format, request.response_schema,
                                         request.schema_name, inline_schema=endpoint.json_object_schema)
        if fmt is not None:
            body["response_format"] = fmt
        if adds_schema_instruction(endpoint, request):
            structured.add_instruction(messages, structured.schema_instruction(request.response_schema))
    return body


def auth_headers(endpoint: EndpointConfig) -> dict[str, str]:
    """The bearer header; a key that cannot travel in an HTTP header is a ConfigError (the key is never echoed)."""
    key = endpoint.api_key()
    if not key:
        return {}
    if not (key.isascii() and key.isprintable()) or any(ch.isspace() for ch in key):
        raise ConfigError(f"the API key in ${endpoint.api_key_env} holds characters an HTTP header cannot carry "
                          "(non-ASCII, spaces or line breaks): check the variable's value")
    if any("@" in urlsplit(u).netloc for u in endpoint.base_urls):
        raise ConfigError(f"model {endpoint.model}: credentials are given both in the base URL and in "
                          f"${endpoint.api_key_env}; keep one")
    return {"Authorization": f"Bearer {key}"}


def check_base_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host; else a ConfigError naming it (redacted) — never retried."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"base URL {redact_url(url)!r} is not an http(s) URL (expected e.g. http://localhost:8000/v1)")
    if MASK in url and redact_url(url) == url:  # e.g. a config.yaml written by a run: credentials are never stored
        raise ConfigError(f"base URL {url!r} holds a redacted credential ({MASK}): give the real URL again with "
                          "--base-url / --judge-base-url, or the key through --api-key-env")
    return url


def api_url(base: str, path: str) -> str:
    """`path` appended to the base URL's path, keeping its query (Azure-style ?api-version=...) after it."""
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def error_message(body: bytes) -> str:
    """The server's own error message, shortened; the raw body when it is not OpenAI-shaped."""
    try:
        parsed = json.loads(body)
        err = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
    except ValueError:
        text = body.decode("utf-8", "replace")
    return text.strip()[:300] or "(empty body)"


def unreadable(body: bytes, exc: Exception) -> str:
    """Why a 2xx body is no completion, in words: a server's error in a 200 ("with an error: ..."), or what is
    missing ("('choices')" told nothing)."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"with a body that is not JSON: {body[:120].decode('utf-8', 'replace')!r}"
    if isinstance(data, dict) and "error" in data and "choices" not in data:
        return f"with an error instead of a completion: {redact_text(error_message(body))}"
    if isinstance(exc, KeyError):
        return f"with JSON that is not a chat completion (no {exc.args[0]!r} in it)"
    if isinstance(exc, IndexError):
        return "with a chat completion without any choice"
    return f"with a chat completion it could not read ({exc})"


def parse_completion(raw: bytes, url: str, attempt: int, price: Price | None) -> Answer:
    """Content, reasoning and usage of an OpenAI-shaped completion (raises on a malformed body)."""
    data = json.loads(raw)
    choice = data["choices"][0]
    message = choice["message"]
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise TypeError("message content is not a string")
    reasoning = message.get("reasoning_content") or message.get("reasoning") or None
    u = data.get("usage") or {}
    prompt, completion = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
    details = u.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or u.get("prompt_cache_hit_tokens") or 0)
    cost = price.cost(prompt, completion, cached) if price else 0.0
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached, cost_usd=cost)
    finish = choice.get("finish_reason")
    return Answer(ok=True, content=content, reasoning=reasoning, attempts=attempt, endpoint=url, usage=usage,
                  finish_reason=finish if isinstance(finish, str) else None)


# ------------------------------------------------------------------ provider profiles


@dataclass(frozen=True)
class Provider:
    """A named server's endpoint defaults: docs/providers.md's quirks table as settings (`--provider NAME`,
    `--judge-provider NAME`, or `provider:` in a config file's writer: / judge: section). Any setting given
    explicitly, as a flag or a config key, wins over the profile's."""

    settings: dict[str, Any]  # EndpointConfig fields: base_urls, api_key_env, concurrency, response_format, ...
    completion_tokens_models: tuple[str, ...] = ()  # models (name prefixes) that refuse max_tokens

    def defaults(self, model: str | None) -> dict[str, Any]:
        """The profile's settings for `model` (OpenAI's o-series and gpt-5 get max_completion_tokens)."""
        found = dict(self.settings)
        if model and model.startswith(self.completion_tokens_models):
            found["use_max_completion_tokens"] = True
        return found


PROVIDERS: dict[str, Provider] = {
    "openai": Provider({"base_urls": ("https://api.openai.com/v1",), "api_key_env": "OPENAI_API_KEY"},
                       completion_tokens_models=("o1", "o3", "o4", "gpt-5")),
    # JSON mode is json_object only: the schema goes into the prompt
    "deepseek": Provider({"base_urls": ("https://api.deepseek.com/v1",), "api_key_env": "DEEPSEEK_API_KEY",
                          "response_format": "json_object"}),
    # batching GPU servers: calls at once found while running (auto, llm/adaptive.py), as for any endpoint
    "vllm": Provider({"base_urls": ("http://localhost:8000/v1",)}),
    "sglang": Provider({"base_urls": ("http://localhost:30000/v1",)}),
    "ollama": Provider({"base_urls": ("http://localhost:11434/v1",), "concurrency": 4}),  # OLLAMA_NUM_PARALLEL's
    "llama-cpp": Provider({"base_urls": ("http://localhost:8080/v1",), "concurrency": 4}),  # llama-server -np 4
    # llama-cpp-python's server answers one request at a time and constrains decoding by the schema sent inside
    # {"type": "json_object", "schema": ...} (it has no json_schema type)
    "llama-cpp-python": Provider({"base_urls": ("http://localhost:8000/v1",), "concurrency": 1,
                                  "response_format": "json_object", "json_object_schema": True}),
}


def provider_defaults(name: str, model: str | None) -> dict[str, Any]:
    """The EndpointConfig settings the profile `name` gives `model`; an unknown name is a ConfigError naming the
    known ones (with a did-you-mean)."""
    profile = PROVIDERS.get(name)
    if profile is None:
        raise ConfigError(unknown_name("provider", name, PROVIDERS))
    return profile.defaults(model)
