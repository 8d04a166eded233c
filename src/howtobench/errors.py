"""One exception tree for the whole toolkit.

    HowtobenchError
    ├── ConfigError            bad settings, missing endpoint, missing API-key variable      [run]
    ├── DataError              benchmark / writings / ratings files that cannot be read
    │   └── RowError           one bad row: carries file and 1-based line number
    ├── OutputError            an output path that cannot be written (not a dir, read-only,   [run]
    │                          disk full, locked by another process): names the path
    ├── LLMError               anything that went wrong talking to a model
    │   ├── RateLimited        429 after the retry budget                                    [run]
    │   ├── TransientError     5xx, reset, timeout after the retry budget                    [run]
    │   ├── EndpointError      the endpoint itself is unusable                               [run]
    │   │   ├── PermanentError   401/403/404 (and other refusals retries cannot fix)
    │   │   ├── Unreachable      nothing answers at any base URL (refused, DNS, circuit open)
    │   │   │   └── ServerDied   the embedded local model server exited (message: log tail)
    │   │   └── ReplyTooLarge    a reply over the size limit (an endless or runaway body)
    │   ├── CacheMiss          replay mode and the call is not cached                        [run]
    │   ├── BadResponse        reply did not parse / validate after re-asks             [writing]
    │   └── ContextTooLong     the prompt (the writing) does not fit the model's context [writing]
    ├── WritingTooLong         a writing over MAX_WRITING_CHARS: failed before any call  [writing]
    ├── JudgeError             a judge spec or judge run that cannot proceed                 [run]
    ├── TooManyFailures        the failed share passed --max-failed-rate: stopped early      [stop]
    └── StopAfterSiblings      a stop that lets the work beside it end by itself first
        ├── BudgetExceeded     the accounted cost reached --max-cost: stopped (exit 2)       [stop]
        ├── CallsDeferred      a call answered by no imported batch file: exported instead   [stop]
        └── Interrupted        Ctrl-C: nothing new sent, the calls in flight recorded (130)  [stop]

Two kinds of failure, one rule (DESIGN.md). [writing]: a fact about one judgment or generation —
recorded on its row with the raw reply, the run goes on. [run]: says nothing about the writing —
the run stops within seconds with one line naming the endpoint or path and the cause, exits
non-zero, and writes no row for it, so the next run resumes. `is_run_level(exc)` is the one test
every runner uses; the CLI catches HowtobenchError and prints its message without a traceback.
[stop]: not an error about the run's inputs but a limit the user set; the rows written so far stay.
The model call that raised a run-level error is logged with status "stopped" (llm/cache.py), so
`howtobench llm usage` shows what stopped a run.

Exit statuses (`howtobench --help`, docs/failures.md): 0 every selected item was judged or generated; 1 an
unexpected error (a bug: Python traceback); 2 the run stopped on a run-level error (or a bad command
line); 3 the run finished but writing-level failures remain (their count is printed); 4 the run stopped
early because the failed share passed --max-failed-rate; 5 the run stopped at its --max-cost; 130 Ctrl-C (what a
shell reports for a program stopped by SIGINT). Each class carries its status in `exit_status`.
"""

from __future__ import annotations

from pathlib import Path

EXIT_STOPPED = 2
EXIT_FAILURES_REMAIN = 3
EXIT_TOO_MANY_FAILURES = 4
EXIT_BUDGET = 5
EXIT_INTERRUPTED = 130  # what a shell reports for a program stopped by SIGINT
INTERRUPTED = ("interrupted: what finished is saved; judge, generate, run, robustness and build pick up from there "
               "when the same command runs again")


class HowtobenchError(Exception):
    """Base of every error the toolkit raises on purpose."""

    exit_status = EXIT_STOPPED


class ConfigError(HowtobenchError):
    """Settings are missing or inconsistent."""


class DataError(HowtobenchError):
    """An input file cannot be used."""


class OutputError(HowtobenchError):
    """An output path cannot be written: say which path and why (exit status 2, no traceback)."""


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


class EndpointError(LLMError):
    """The endpoint is unusable (wrong key, model, URL, or nothing listening): every call would fail alike."""


class PermanentError(EndpointError):
    """The endpoint refused the request in a way retries cannot fix."""


class Unreachable(EndpointError):
    """No base URL of the endpoint answers (connection refused, DNS failure, every circuit open)."""


class ServerDied(Unreachable):
    """The embedded local model server exited; the message carries the tail of its log."""


class BadResponse(LLMError):
    """The reply could not be parsed or validated."""


class ContextTooLong(LLMError):
    """The prompt does not fit the model's context window: a fact about this writing, not the endpoint."""


class ReplyTooLarge(EndpointError):
    """A reply passed the transport's size limit: the endpoint misbehaves (every call could do the same)."""


class WritingTooLong(HowtobenchError):
    """A writing longer than the toolkit judges (judges/runner.py MAX_WRITING_CHARS): no call is made for it."""


class CacheMiss(LLMError):
    """Replay mode: the call is not in the cache."""


class JudgeError(HowtobenchError):
    """A judge cannot be built or run."""


class TooManyFailures(HowtobenchError):
    """More items failed than --max-failed-rate allows: the run stops early; what it wrote stays, a re-run resumes."""

    exit_status = EXIT_TOO_MANY_FAILURES


class StopAfterSiblings(HowtobenchError):
    """A stop that the concurrent work beside it does not share: siblings end by themselves (their finished work
    is kept and written) before it propagates, instead of being cancelled (see concurrency.py)."""


class BudgetExceeded(StopAfterSiblings):
    """The accounted cost reached --max-cost: the command stops before its next call (resumable; exit status 5)."""

    exit_status = EXIT_BUDGET


class CallsDeferred(StopAfterSiblings):
    """Batch-file mode: this call's answer is in no imported batch output yet; it goes into the exported file
    (steps/batch_files.py) and the job stops once everything it can do without it is done."""


class Interrupted(StopAfterSiblings):
    """Ctrl-C (the first): nothing new is sent; the calls in flight land and are recorded, then the command stops
    (howtobench/interrupt.py; exit status 130)."""

    exit_status = EXIT_INTERRUPTED


_WRITING_LEVEL: tuple[type[Exception], ...] = (BadResponse, ContextTooLong, RowError, WritingTooLong)


def is_run_level(exc: BaseException) -> bool:
    """True when `exc` must stop the run instead of becoming a failed row (see the module docstring).

    Everything we raise on purpose is run-level except the writing-level classes; an exception we did
    not raise on purpose (a bug) is run-level too — it is never a fact about a writing.
    """
    return not isinstance(exc, _WRITING_LEVEL)
