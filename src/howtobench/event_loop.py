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
_thresholds_before: tuple[int, int, int] | None = None
YOUNG_THRESHOLD = 10_000  # allocations less frees between young-generation passes while a batch runs (CPython: 700)


@contextmanager
def loaded_data_frozen() -> Iterator[None]:
    """While a batch of work runs, keep everything already alive (the loaded benchmark, imported modules) out of
    the garbage collector's passes, and run its young-generation passes less often; back to both afterwards.

    Why freeze: a judge run allocates fast, so CPython's collector runs full passes now and then, and each one walks
    the whole heap — ~190,000 objects once the release is loaded, 100-150 ms on a 2-core EPYC, during which no
    response is read: one such pause costs every call in flight a whole call's latency (bench/saturation.py).
    `gc.freeze()` moves what exists now to the permanent generation, which passes skip; `gc.unfreeze()` at the
    end gives it back, so cyclic garbage made before is still collected later (nothing leaks across runs in one
    process, e.g. the tests). Nested blocks unfreeze only when the outermost one ends.

    Why a higher young threshold (`YOUNG_THRESHOLD`, CPython's default 700): a model call's objects (its body,
    reply, result, task and futures) mostly die by reference counting within the call, but those alive at a pass
    — the hundreds of calls in flight — are walked and promoted, and promoted ones are walked again by the older
    passes: at 700 a ToW judgment spent a fifth of its CPU in the collector (260 young, 23 middle and 2 full passes
    per 2,280 calls; ~0.15 ms a call, bench/reward_server.py's judge layer). At 10,000 the same work takes 13 young
    passes and 1 middle one; the cyclic garbage they collect is the same, found later (the peak memory of those
    2,280 calls rose 12 MB, ~5 %).
    """
    global _frozen_depth, _thresholds_before
    if _frozen_depth == 0:
        gc.freeze()
        _thresholds_before = gc.get_threshold()
        young, middle, old = _thresholds_before
        gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    _frozen_depth += 1
    try:
        yield
    finally:
        _frozen_depth -= 1
        if _frozen_depth == 0:
            if _thresholds_before is not None:
                gc.set_threshold(*_thresholds_before)
            gc.unfreeze()
