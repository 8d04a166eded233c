"""The event loop every command runs on: uvloop where it is installed (Linux, macOS), asyncio's own elsewhere.

Why: a judge run is one Python thread driving hundreds of calls a second, and the loop's own bookkeeping
(tasks, futures, callbacks, socket reads) is a large share of that thread's work. uvloop (libuv, made for
exactly this) does it in C: `bench/saturation.py` (`howtobench judge --judge-concurrency 64` against a fake
server of 640 calls/s) went from ~0.72-0.81 to ~0.85-0.88 of capacity on a shared 2-core machine. Nothing a
run computes depends on the loop. Windows has no uvloop (pyproject's marker leaves it out), so there the
standard loop runs; `HOWTOBENCH_EVENT_LOOP=asyncio` picks it anywhere (to rule the loop out when something
misbehaves).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
ENV = "HOWTOBENCH_EVENT_LOOP"


def loop_name() -> str:
    """"uvloop" or "asyncio": the loop `run` uses in this process."""
    if os.environ.get(ENV, "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:  # Windows (no wheel: pyproject's marker leaves it out) or a platform without uvloop
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop `loop_name()` names (a new loop, closed after)."""
    if loop_name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
