"""Money first: the estimate before the first call, ask / refuse above the threshold, unknown prices shown as
unknown, user prices on real calls, and --max-cost stopping cleanly and resumably."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli import money
from howtobench.cli.main import app

JUDGE = "gpt-4o-2024-11-20"  # in the built-in price table


def invoke(args: list[str], input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, input=input)
    return result.exit_code, result.output + (str(result.exception) if result.exception else "")


def run_args(server: FakeServer, data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--data", str(data), "--task", "guide", "--limit", "2", "--method", "single",
            "--base-url", server.base_url, "--model", "my-model", "--judge-base-url", server.base_url,
            "--judge-model", JUDGE, "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run"),
            "--bootstrap", "10", "--no-progress", "--max-tokens", "100",
            "--no-preflight", *extra]  # the calls counted here are the work's (the preflight has its own tests)


def test_estimate_comes_first_and_unknown_prices_stay_unknown(fake_server: FakeServer, tmp_path: Path,
                                                             bench_root: Path) -> None:
    fake_server.handler = default_handler
    code, out = invoke(run_args(fake_server, bench_root, tmp_path))
    assert code == 0, out
    assert out.lstrip().startswith("howtobench run — estimate before the first call")
    lines = out.splitlines()
    writer = next(k for k, line in enumerate(lines) if line.strip().startswith("writer · my-model: 2 calls"))
    judge = next(k for k, line in enumerate(lines) if line.strip().startswith(f"judge · {JUDGE}: 2 calls"))
    assert lines[writer + 1].strip() == "cost unknown"  # never $0
    assert re.match(r"at most ~\$\d+\.\d\d", lines[judge + 1].strip())
    assert "+ unknown (my-model: no price" in out and "time: at most" in out
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["usage"]["generation"]["unpriced_calls"] == 2  # the real run: unknown, never $0
    assert manifest["usage"]["baseline:single"]["unpriced_calls"] == 0


def test_above_the_threshold_without_a_terminal_nothing_is_sent(fake_server: FakeServer, tmp_path: Path,
                                                                bench_root: Path) -> None:
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"))
    assert code != 0 and "no terminal to ask on: nothing was sent. Pass --yes" in out
    assert fake_server.requests == [] and not (tmp_path / "run" / "judgments").exists()
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0", "--yes"))
    assert code == 0, out
    assert len(fake_server.requests) == 4


def test_on_a_terminal_it_asks(fake_server: FakeServer, tmp_path: Path, bench_root: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(money, "stdin_is_terminal", lambda: True)
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"), input="n\n")
    assert code == 1 and "Go ahead and spend at most ~$" in out and "nothing was sent" in out
    assert fake_server.requests == []
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--confirm-above", "0"), input="y\n")
    assert code == 0, out
    assert len(fake_server.requests) == 4  # 2 writings + 2 single-judge calls


def priced_handler(request: dict[str, Any]) -> Reply:
    """1,000 prompt tokens per call: $0.01 at the $10 / M tokens of the test's price table."""
    return Reply.text("一篇文章。", usage={"prompt_tokens": 1000, "completion_tokens": 0})


def test_max_cost_stops_cleanly_and_a_rerun_resumes(fake_server: FakeServer, tmp_path: Path,
                                                    bench_root: Path) -> None:
    fake_server.handler = priced_handler
    prices = tmp_path / "prices.yaml"
    prices.write_text("my-model: {input: 10.0, output: 10.0}\n", encoding="utf-8")
    out_file = tmp_path / "w.jsonl"
    args = ["generate", "--data", str(bench_root), "--task", "open", "--limit", "10", "--base-url",
            fake_server.base_url, "--model", "my-model", "--concurrency", "1", "--workspace", str(tmp_path / "ws"),
            "-o", str(out_file), "--no-progress", "--prices", str(prices), "--no-preflight"]
    code, out = invoke([*args, "--max-cost", "0.025"])
    assert code != 0 and "--max-cost $0.03 reached" in out.replace("0.025", "0.03")
    assert len(fake_server.requests) == 3  # $0.01 each: the 4th call was refused at $0.03 accounted
    assert len(out_file.read_text(encoding="utf-8").splitlines()) == 3  # finished work kept, nothing half-written
    code, out = invoke(args)
    assert code == 0, out
    assert len(fake_server.requests) == 10 and len(out_file.read_text(encoding="utf-8").splitlines()) == 10
    code, out = invoke(["llm", "usage", "--workspace", str(tmp_path / "ws"), "--json"])
    assert sum(row["cost_usd"] for row in json.loads(out)) == pytest.approx(0.10)  # user prices on real calls


def test_max_cost_needs_a_price(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    code, out = invoke(run_args(fake_server, bench_root, tmp_path, "--max-cost", "1"))
    assert code != 0 and "--max-cost cannot be kept: no price is known for my-model" in out
    assert fake_server.requests == []
