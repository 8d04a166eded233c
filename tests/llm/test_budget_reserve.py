"""Issue 23, defect 8: --max-cost passed by at most one call, a stop line with the call log's figure, saying the
limit counts per command, and an exit status of its own (5).

Before, every call in flight was let through at once (the cap overshot by 44 % at $0.05) and the stop line gave
the figure at the moment of the stop ($0.1015 while the call log held $0.127).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import FAST_RETRY

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.errors import BudgetExceeded
from howtobench.llm.budget import spending_limit
from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest, SamplingParams

CALL_USD = 0.01  # every reply at its max_tokens (1,000) at $10 / M, prompts free: each call costs its bound


def billed(request: dict[str, Any]) -> Reply:
    return Reply.text("一篇文章。", usage={"prompt_tokens": 0, "completion_tokens": request["max_tokens"]}, delay=0.05)


def _prices(tmp_path: Path, model: str = "m") -> Path:
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{model}: {{input: 0.0, output: 10.0}}\n", encoding="utf-8")
    return prices


async def test_calls_in_flight_cannot_pass_the_limit_by_more_than_one_call(fake_server: FakeServer,
                                                                           tmp_path: Path) -> None:
    fake_server.handler = billed
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), concurrency=16, timeout_s=10)
    sampling = SamplingParams(max_tokens=1000)
    limit = 0.05
    with spending_limit(limit) as budget:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY, prices=_prices(tmp_path)) as client:
            outcomes = await asyncio.gather(*(client.chat(ChatRequest(
                messages=({"role": "user", "content": f"item {i}"},), sampling=sampling)) for i in range(40)),
                return_exceptions=True)
    assert budget is not None
    sent = len(fake_server.requests)
    assert sum(isinstance(o, BudgetExceeded) for o in outcomes) == 40 - sent
    assert budget.spent == pytest.approx(sent * CALL_USD)
    assert limit <= budget.spent <= limit + CALL_USD + 1e-9  # 16 calls at once used to go out together: $0.16
    assert budget.reserved == 0.0
    logged = sqlite3.connect(tmp_path / "calls.sqlite").execute("SELECT SUM(cost_usd) FROM calls").fetchone()[0]
    said = str(next(o for o in outcomes if isinstance(o, BudgetExceeded)))
    assert f"this command's calls cost ${logged:,.4f} (what the call log holds" in said
    assert "the limit counts per command, so a re-run starts again from $0" in said


def test_a_budget_stop_exits_5_with_one_line(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = billed
    prices = _prices(tmp_path, "my-model")
    command = [sys.executable, "-m", "howtobench", "generate", "--data", str(bench_root), "--task", "open",
               "--limit", "6", "--base-url", fake_server.base_url, "--model", "my-model", "--max-tokens", "1000",
               "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "w.jsonl"), "--no-progress",
               "--prices", str(prices), "--no-preflight", "--yes", "--max-cost", "0.025"]
    done = subprocess.run(command, env={**os.environ, "COLUMNS": "300"}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 5, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("--max-cost $0.03 reached: this command's calls cost $0.0300 (what the call log holds")
    assert "error:" not in last
