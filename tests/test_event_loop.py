"""The commands' event loop and the collector setting their batches run under."""

from __future__ import annotations

import asyncio
import gc

from howtobench.concurrency import as_finished
from howtobench.event_loop import YOUNG_THRESHOLD, loaded_data_frozen, run


def test_loaded_objects_are_frozen_while_a_batch_runs_and_given_back_after() -> None:
    """The collector's full passes skip what was alive when the batch started (gc.freeze), nested batches keep
    it frozen until the outermost ends, and afterwards it is collectable again (nothing leaks across runs)."""
    assert gc.get_freeze_count() == 0
    loaded = [{"id": i} for i in range(1000)]
    with loaded_data_frozen():
        assert gc.get_freeze_count() >= len(loaded)
        with loaded_data_frozen():
            pass
        assert gc.get_freeze_count() >= len(loaded)
    assert gc.get_freeze_count() == 0


def test_young_passes_are_rarer_while_a_batch_runs_and_the_thresholds_come_back_after() -> None:
    """A batch runs with the young generation's threshold raised (a call's objects alive at a pass were walked and
    promoted); nested blocks keep it; the process's own thresholds are back once the outermost block ends, even
    when it raised."""
    before = gc.get_threshold()
    try:
        with loaded_data_frozen():
            assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), before[1], before[2])
            with loaded_data_frozen():
                pass
            assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)
            raise KeyError("a batch that fails")
    except KeyError:
        pass
    assert gc.get_threshold() == before
    collected: list[int] = []
    gc.callbacks.append(lambda phase, info: collected.append(info["generation"]) if phase == "start" else None)
    try:
        with loaded_data_frozen():
            junk = [[i] for i in range(YOUNG_THRESHOLD // 2)]  # half the threshold of containers: no young pass
            assert 0 not in collected
        del junk
    finally:
        gc.callbacks.pop()


def test_every_batch_of_items_runs_with_the_loaded_data_frozen() -> None:
    """as_finished (the judge runner, generation, perturbations, build steps) is where batches start."""
    seen: list[int] = []

    async def item(i: int) -> int:
        await asyncio.sleep(0)
        seen.append(gc.get_freeze_count())
        return i

    async def main() -> list[int]:
        async with as_finished(item(i) for i in range(5)) as finished:
            return sorted([r async for r in finished])

    assert run(main()) == [0, 1, 2, 3, 4]
    assert len(seen) == 5 and min(seen) > 0 and gc.get_freeze_count() == 0
