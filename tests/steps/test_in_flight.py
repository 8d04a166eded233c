"""Writings in flight follow the judge's concurrency: `--judge-concurrency N` alone keeps N calls in flight."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.steps.client import writings_in_flight


def test_default_follows_the_judge_capacity() -> None:
    two_urls = EndpointConfig(model="j", base_url=["http://a/v1", "http://b/v1"], concurrency=24)
    assert writings_in_flight(None, two_urls) == 96 and writings_in_flight(5, two_urls) == 5  # 2 x 24 x 2 URLs
    assert writings_in_flight(None, None) == 8  # the local model / no model: the old default


def test_under_auto_concurrency_writings_in_flight_are_sized_for_256_calls_per_url_not_the_cap() -> None:
    """A writing in flight holds its prompts: sized for the cap of 1,024 a ToW run held ~620 MB more."""
    auto = EndpointConfig(model="j", base_url=["http://a/v1", "http://b/v1"])
    assert auto.max_concurrency == 1024 and writings_in_flight(None, auto) == 2 * 256 * 2
    capped = EndpointConfig.model_validate({"model": "j", "base_url": "http://a/v1", "concurrency": "auto:40"})
    assert writings_in_flight(None, capped) == 80  # a lower cap counts as it is


def test_judge_concurrency_alone_fills_the_slots(tmp_path: Path, bench_root: Path) -> None:
    arrivals: list[float] = []
    delay_s = 1.0  # each reply's delay: no second-wave request can arrive before the first reply is back

    def slow(request: dict[str, Any]) -> Reply:
        arrivals.append(time.monotonic())
        return dataclasses.replace(default_handler(request), delay=delay_s)

    with FakeServer(slow) as server:
        args = ["judge", "--method", "single", "--data", str(bench_root), "--task", "open", "--limit", "3",
                "--judge-base-url", server.base_url, "--judge-model", "j", "--judge-concurrency", "24",
                "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "o.jsonl"), "--no-progress", "--no-preflight"]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(arrivals) == 30  # 3 items x 10 shipped writings
    first_wave = sum(1 for t in arrivals if t - arrivals[0] < delay_s)
    assert first_wave == 24  # all 24 slots busy at once (the old default of 8 writings gave 8)
