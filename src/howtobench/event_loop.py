"""The event loop every command runs on (asyncio's own), and the garbage-collector setting its batches run under.

`run` is the one entry from a command into async code, so a setting every run needs has one place. The
standard loop is used: uvloop was tried (a core dependency for a session) and measured side by side on idle
2-core machines it gave no gain — `bench/saturation.py` 0.896-0.904 of capacity on uvloop against 0.908-0.923 on
asyncio's loop — while the collector's full passes over the loaded data were the real stall (below).
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`: a new event loop, closed after; the first Ctrl-C drains the calls in flight
    (`howtobench.interrupt`), the second stops at once."""
    return asyncio.run(_draining(main))


async def _draining(main: Coroutine[Any, Any, T]) -> T:
    from howtobench.interrupt import draining_on_ctrl_c  # errors -> interrupt: kept out of this module's imports

    task = asyncio.current_task()
    assert task is not None  # asyncio.run runs us as a task
    with draining_on_ctrl_c(asyncio.get_running_loop(), task):
        return await main


def run_anywhere(main: Coroutine[Any, Any, T]) -> T:
    """`run(main)`, also where an event loop is already running in this thread (a Jupyter cell: asyncio.run refuses
    there): then on a new loop in a worker thread, with this thread's context variables, blocking until it ends
    (as a synchronous call does); its exception is raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run(main)
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="howtobench-sync") as pool:
        return pool.submit(context.run, run, main).result()


_frozen_depth = 0


@contextmanager
def loaded_data_frozen() -> Iterator[None]:
    """While a batch of work runs, keep everything already alive (the loaded benchmark, imported modules) out of
    the garbage collector's passes; back in them afterwards.

    Why: a judge run allocates fast, so CPython's collector runs full passes now and then, and each one walks the
    whole heap — ~190,000 objects once the release is loaded, 100-150 ms on a 2-core EPYC, during which no
    response is read: one such pause costs every call in flight a whole call's latency (bench/saturation.py).
    `gc.freeze()` moves what exists now to the permanent generation, which passes skip; `gc.unfreeze()` at the
    end gives it back, so cyclic garbage made before is still collected later (nothing leaks across runs in one
    process, e.g. the tests). Nested blocks unfreeze only when the outermost one ends.
    """
    global _frozen_depth
    if _frozen_depth == 0:
        gc.freeze()
    _frozen_depth += 1
    try:
        yield
    finally:
        _frozen_depth -= 1
        if _frozen_depth == 0:
            gc.unfreeze()
