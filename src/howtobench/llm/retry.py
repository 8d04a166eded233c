"""How a failed attempt is classified and how long to wait before the next one.

    429                         rate limited  -> wait Retry-After (or backoff), retry
    408 409 425 5xx, transport  transient     -> jittered exponential backoff, retry
    401 403 404                 fatal         -> PermanentError at once: the endpoint, model or key is wrong,
                                                 so every other call would fail the same way
    other 4xx (400, 413, 422)   request       -> this call fails at once (e.g. prompt too long); others go on
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Literal

Kind = Literal["ok", "rate_limited", "transient", "fatal", "request"]

_TRANSIENT = {408, 409, 425}
_FATAL = {401, 403, 404}


def classify_status(status: int) -> Kind:
    if 200 <= status < 300:
        return "ok"
    if status == 429:
        return "rate_limited"
    if status in _TRANSIENT or status >= 500:
        return "transient"
    if status in _FATAL:
        return "fatal"
    return "request"


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

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Wait before retry number `retry` (1-based): full jitter, but never less than the server asked."""
        jittered = rng.uniform(0, min(self.max_s, self.base_s * 2 ** (retry - 1)))
        if retry_after is None:
            return jittered
        return min(self.max_retry_after_s, retry_after) + jittered * 0.1
