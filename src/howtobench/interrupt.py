"""Ctrl-C that drains: the first stops sending, lets the calls in flight land and be recorded; the second aborts.

Why: asyncio's own Ctrl-C cancels every task at once, so the model calls in flight were dropped with their
answers unread, and the next run sent them again — the provider bills both (32 of 32 answered calls repeated in
one test). A call is paid for once it is sent; its answer is worth waiting for.

How: `draining_on_ctrl_c` (the event loop of every command, `event_loop.run`) takes SIGINT. The first sets the
process's drain flag and prints how many calls are in flight: from then on `check_drain` refuses to start
anything — a call not yet sent (the client checks before it queues for a slot and again once it holds one, so a
retry is not sent either), an item not yet started (the runner loop) — with `Interrupted`, a `StopAfterSiblings`:
the work beside it is waited for, not cancelled, so every call already on the wire is answered (each bounded by its
endpoint's timeout), cached and logged, and every item that finishes is written. Then the command exits 130 with
one line. The second Ctrl-C cancels the command at once, as before (`KeyboardInterrupt`, exit 130).

Calls waiting for a provider's batch (`--batch`) are not on the wire: the batch is recorded in the workspace and the
next run resumes it, so the first Ctrl-C ends their wait at once (`on_drain`) instead of waiting up to a day.

A process started in the background by a non-interactive shell ignores SIGINT; that is respected (no handler).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from howtobench.errors import INTERRUPTED, Interrupted

_state = {"draining": False, "in_flight": 0}
_deadlines: dict[int, float] = {}  # id of a request on the wire -> when its timeout ends (time.monotonic)


_on_drain: list[Callable[[], None]] = []


def on_drain(callback: Callable[[], None]) -> Callable[[], None]:
    """Call `callback` when the first Ctrl-C asks to drain (a transport whose calls wait on something other than
    their own HTTP exchange — a provider's batch — ends their wait then); returns the function that unregisters."""
    _on_drain.append(callback)
    return lambda: _on_drain.remove(callback) if callback in _on_drain else None


def draining() -> bool:
    """True once the first Ctrl-C asked this process to drain."""
    return bool(_state["draining"])


def request_drain() -> None:
    """Stop starting work (what the first Ctrl-C does; tests call it directly)."""
    _state["draining"] = True
    for callback in list(_on_drain):
        callback()


def reset() -> None:
    """Back to normal (a new command in the same process: the tests, a notebook)."""
    _state["draining"] = False


def check_drain() -> None:
    """Raise `Interrupted` once draining: called before a call is sent and before an item starts."""
    if _state["draining"]:
        raise Interrupted(INTERRUPTED)


def calls_in_flight() -> int:
    """Requests on the wire now (sent, not yet answered), in every client of this process."""
    return int(_state["in_flight"])


def longest_wait_s() -> float:
    """Seconds until the last request on the wire reaches its timeout (0 when none is)."""
    return max((d - time.monotonic() for d in _deadlines.values()), default=0.0)


@contextmanager
def sending(timeout_s: float) -> Iterator[None]:
    """Count one request on the wire while the block runs (the transport's POST), answered within `timeout_s`."""
    token = object()
    _state["in_flight"] += 1
    _deadlines[id(token)] = time.monotonic() + timeout_s
    try:
        yield
    finally:
        _state["in_flight"] -= 1
        del _deadlines[id(token)]


def _installable() -> bool:
    """A SIGINT handler can be installed: the main thread, and SIGINT not ignored (a background job)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    return signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


@contextmanager
def draining_on_ctrl_c(loop: asyncio.AbstractEventLoop, task: asyncio.Task[object]) -> Iterator[None]:
    """While the block runs, the first Ctrl-C drains (see the module docstring) and the second cancels `task`."""
    if not _installable():
        yield
        return
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            request_drain()
            print(f"\ninterrupted: no new calls are sent; waiting for the {calls_in_flight()} in flight to be answered "
                  f"and recorded (at most {longest_wait_s():.0f} s, their timeout). Ctrl-C again stops at once (their "
                  "answers are then lost and paid again on resume)", file=sys.stderr, flush=True)
        else:
            task.cancel()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # back to Python's default handler (KeyboardInterrupt)
        reset()
        if presses > 1:
            raise KeyboardInterrupt  # the CLI's silent exit 130, as an undrained Ctrl-C always was
