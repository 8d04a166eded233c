"""One exception tree for the whole toolkit.

    HowtobenchError
    ├── ConfigError            bad settings, missing endpoint, missing API-key variable
    ├── DataError              benchmark / writings / ratings files that cannot be read
    │   └── RowError           one bad row: carries file and 1-based line number
    ├── LLMError               anything that went wrong talking to a model
    │   ├── RateLimited        429 after the retry budget
    │   ├── TransientError     5xx, reset, timeout after the retry budget
    │   ├── PermanentError     400/401/404: retrying cannot help, fail fast
    │   ├── BadResponse        reply did not parse / validate after re-asks
    │   └── CacheMiss          replay mode and the call is not cached
    └── JudgeError             a judge spec or judge run that cannot proceed

Callers catch the narrowest class they can act on; the CLI catches HowtobenchError
and prints its message without a traceback.
"""

from __future__ import annotations

from pathlib import Path


class HowtobenchError(Exception):
    """Base of every error the toolkit raises on purpose."""


class ConfigError(HowtobenchError):
    """Settings are missing or inconsistent."""


class DataError(HowtobenchError):
    """An input file cannot be used."""


class RowError(DataError):
    """One row of a line-oriented file is bad; names the file and the line."""

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}")


class LLMError(HowtobenchError):
    """A model call failed."""


class RateLimited(LLMError):
    """The endpoint kept answering 429."""


class TransientError(LLMError):
    """Server errors, timeouts or dropped connections outlasted the retries."""


class PermanentError(LLMError):
    """The endpoint refused the request in a way retries cannot fix."""


class BadResponse(LLMError):
    """The reply could not be parsed or validated."""


class CacheMiss(LLMError):
    """Replay mode: the call is not in the cache."""


class JudgeError(HowtobenchError):
    """A judge cannot be built or run."""
