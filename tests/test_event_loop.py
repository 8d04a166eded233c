"""The commands' event loop: uvloop by default where installed, asyncio's own on request; same results."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.main import app
from howtobench.event_loop import ENV, loop_name, run


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


@pytest.mark.skipif(sys.platform == "win32", reason="no uvloop on Windows (pyproject's marker)")
def test_uvloop_by_default_and_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert loop_name() == "uvloop" and run(_loop_module()).startswith("uvloop")
    monkeypatch.setenv(ENV, "asyncio")
    assert loop_name() == "asyncio" and run(_loop_module()).startswith("asyncio")


def test_a_judge_run_gives_the_same_judgments_on_either_loop(tmp_path: Path, bench_root: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = {}
    with FakeServer() as server:
        for loop in ("uvloop", "asyncio"):
            monkeypatch.setenv(ENV, loop)
            out = tmp_path / f"{loop}.jsonl"
            args = ["judge", "--method", "single", "--data", str(bench_root), "--task", "open", "--limit", "2",
                    "--judge-base-url", server.base_url, "--judge-model", "j", "--judge-concurrency", "4",
                    "--workspace", str(tmp_path / f"ws-{loop}"), "-o", str(out), "--no-progress", "--yes"]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
            rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            outputs[loop] = sorted((r["item_id"], r["model"], r["score"], r["cache_keys"]) for r in rows)
    assert len(outputs["uvloop"]) == 20 and outputs["uvloop"] == outputs["asyncio"]
