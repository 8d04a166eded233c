"""How an HTTP answer is classified and how long to wait before the next attempt.

    2xx                                     ok
    429                                     rate_limited -> wait Retry-After (or backoff), retry; RateLimited
                                                            when the retry budget is spent
    408 409 425 5xx                         transient    -> jittered exponential backoff, retry; TransientError
    4xx/5xx saying the prompt is too long   too_long     -> this call fails at once as ContextTooLong (a fact about
                                                            the writing: the run goes on)
    4xx saying a content filter refused it  filtered     -> this call fails at once (a fact about the writing)
    any other 4xx, or a 3xx left            refused      -> PermanentError at once: wrong key, model, URL or
                                                            parameter, so every other call would fail alike

Redirects are followed by the transport; a 3xx that reaches here could not be followed.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Literal

Kind = Literal["ok", "rate_limited", "transient", "too_long", "filtered", "refused"]

_TRANSIENT = {408, 409, 425}
# What OpenAI, vLLM, llama.cpp (and llama-cpp-python), SGLang, TGI, DeepSeek, Anthropic and Gemini answer when
# the prompt (plus max_tokens) does not fit the model's context window.
_TOO_LONG = re.compile(
    r"context_length_exceeded|maximum context length|context length|context window|exceeds? the (available )?context"
    r"|exceed_context_size|maximum model length|prompt is too long|input is too long|too many (input )?tokens"
    r"|longer than the model'?s context|max_new_tokens. must be <=|exceeds the maximum number of tokens",
    re.IGNORECASE,
)
_FILTERED = re.compile(
    r"content[_ ]filter|content management policy|content_policy|content exists risk|data_inspection_failed"
    r"|inappropriate content",
    re.IGNORECASE,
)


def classify_status(status: int, message: str = "") -> Kind:
    """The kind of an HTTP answer, from its status and the server's error message."""
    if 200 <= status < 300:
        return "ok"
    if status == 429:
        return "rate_limited"
    if status >= 400 and (status == 413 or _TOO_LONG.search(message)):
        return "too_long"
    if status in _TRANSIENT or status >= 500:
        return "transient"
    if 400 <= status < 500 and _FILTERED.search(message):
        return "filtered"
    return "refused"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds (fractions accepted) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff settings; the retry *count* is `EndpointConfig.max_retries`."""

    base_s: float = 1.0
    max_s: float = 60.0
    max_retry_after_s: float = 600.0
    max_connect_s: float = 1.0  # after a failed connection: the circuit breaker, not backoff, handles a dead URL

    def delay(self, retry: int, retry_after: float | None, rng: random.Random, *, connect: bool = False) -> float:
        """Wait before retry number `retry` (1-based): full jitter, but never less than the server asked."""
        cap = self.max_connect_s if connect else self.max_s
        jittered = rng.uniform(0, min(cap, self.base_s * 2 ** (retry - 1)))
        if retry_after is None:
            return jittered
        return min(self.max_retry_after_s, retry_after) + jittered * 0.1
