"""The first screen (llm/budget.py): durations read after "at most"; batch commands at the batch rate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.llm.budget import Lane, Quote, duration_text, first_screen


def test_durations_read_after_at_most() -> None:
    assert [duration_text(s) for s in (5, 29, 200, 3900)] == ["a minute", "a minute", "~3 min", "~1 h 05 min"]


def test_a_short_command_says_at_most_a_minute() -> None:
    """It printed "time: at most ~under a minute" (seen on `build classify` of six texts)."""
    quick = Quote((Lane("writer", "fb", 6, 11_898, 1_800, None, 8),))
    screen = first_screen("build classify", quick)
    assert "  time: at most a minute with 8 writer calls at once" in screen and "~under" not in screen


def test_batch_commands_are_priced_at_the_batch_rate(tmp_path: Path, bench_root: Path) -> None:
    """`judge --batch` showed (and held against --confirm-above) the list price, twice what the batch costs, with
    a time for calls in flight instead of the batch window."""
    args = ["judge", "--data", str(bench_root), "--method", "single", "--task", "guide", "--limit", "40",
            "--judge-base-url", "http://127.0.0.1:1/v1", "--judge-model", "gpt-4o-2024-11-20", "--no-progress",
            "-o", str(tmp_path / "out.jsonl"), "--workspace", str(tmp_path / "ws"), "--confirm-above", "0"]
    shown = {}
    for mode, extra in (("list", []), ("batch", ["--batch"])):
        result = CliRunner().invoke(app, args + extra)
        said = result.output + str(result.exception)
        assert "there is no terminal to ask on: nothing was sent" in said  # refused before any call
        shown[mode] = float(re.search(r"total: [\d,]+ calls, (?:expected ~\$[\d.,]+, )?at most ~\$([\d.,]+)",  # type: ignore[union-attr]
                                      said).group(1))
        assert ("batch window (up to 24 h)" in said) == (mode == "batch")
    assert shown["batch"] == pytest.approx(shown["list"] / 2, abs=0.01)  # OpenAI's batch API: half the list price


def test_the_preflight_probes_are_one_line_not_an_estimate_block_each() -> None:
    """Issue 40, point 6: a role with nothing left to do but its preflight probe (writings already generated) got a
    whole estimate block ("writer · w: 1 call, ~2 prompt + ~1 completion tokens"), read as work left."""
    from howtobench.config import EndpointConfig
    from howtobench.llm.dryrun import price_plan
    from howtobench.llm.preflight import with_preflight
    from howtobench.llm.types import ChatRequest

    work = [ChatRequest(messages=({"role": "user", "content": "judge this"},), purpose="judge")] * 4
    endpoints = {"writer": EndpointConfig(model="w", base_urls=("http://a/v1",)),
                 "judge": EndpointConfig(model="j", base_urls=("http://b/v1", "http://c/v1"))}
    estimates = with_preflight([price_plan("judge", "j", work)], endpoints)
    screen = first_screen("run", Quote.of(estimates, {}))
    assert "writer · w" not in screen  # no block for the probe alone
    assert "  judge · j: 6 calls," in screen  # its 2 probes included
    assert "  preflight: 3 one-token calls (j, w), one per base URL" in screen
    assert "  total: 7 calls," in screen
