"""bench/judge_emulator.py is the measuring stick of issue 37's reward path: its clock and its ideal window are checked
on crafted calls whose answer is known by hand (batch 2, 1-second steps, prefill free, 3 tokens per reply)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from judge_emulator import Engine, Rates, blocks_of, ideal_run  # noqa: E402

# 4 calls of 40 tokens, none sharing a block; 2 run at once, each done 3 steps after its prefill: steps 1-3 run the
# first two, steps 4-6 the other two — 6 steps of 1 s, the batch full in every one
RATES = Rates(batch=2, decode_step_s=1.0, prefill_rate=1e12, chunk=10_000, completion_tokens=3, speedup=500.0)
TEXTS = [f"{k}" * 80 for k in range(4)]


def test_the_ideal_window_of_crafted_calls_is_the_hand_count() -> None:
    assert ideal_run(RATES, [blocks_of(t) for t in TEXTS]) == pytest.approx((6.0, 1.0))
    assert ideal_run(RATES, [blocks_of(t) for t in TEXTS[:3]]) == pytest.approx((6.0, 0.75))  # the 3rd runs alone
    assert ideal_run(RATES, [blocks_of(t) for t in TEXTS[:2]]) == pytest.approx((3.0, 1.0))


async def test_calls_sent_at_once_get_the_ideal_window_on_the_emulated_clock() -> None:
    """The window and busy share count emulated seconds: the emulator's own time around each 2-ms step is left out
    (on the wall clock at x500 it would be a large share of the window)."""
    engine = Engine(RATES)
    await asyncio.gather(*(engine.run({"messages": [{"role": "user", "content": t}]}) for t in TEXTS))
    stats = engine.stats()
    assert stats["window_s"] == pytest.approx(6.0, abs=1e-6)  # whatever the machine's load: no idle time in it
    assert stats["busy_share"] == pytest.approx(1.0, abs=0.01)
    assert stats["capacity_share"] == pytest.approx(1.0, abs=0.01)


async def test_a_call_sent_late_lengthens_the_window_and_lowers_the_shares() -> None:
    """Two calls, then a third only once they are back and the judge sat idle 2 emulated seconds: the window holds the
    idle time, the ideal client (all three at once) needs 6 s, and the steps of the third run the batch half full."""
    engine = Engine(RATES)
    await asyncio.gather(*(engine.run({"messages": [{"role": "user", "content": t}]}) for t in TEXTS[:2]))
    await asyncio.sleep(2.0 / RATES.speedup)
    await engine.run({"messages": [{"role": "user", "content": TEXTS[2]}]})
    stats = engine.stats()
    assert stats["window_s"] >= 8.0  # 3 s, at least 2 s idle, 3 s
    assert stats["ideal_window_s"] == pytest.approx(6.0)
    assert stats["capacity_share"] == pytest.approx(6.0 / stats["window_s"])
    assert stats["busy_share"] == pytest.approx((3 * 1.0 + 3 * 0.5) / stats["window_s"])
