"""steps/client.py: replaying the embedded model's calls needs no server (nor the [local] extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.errors import CacheMiss
from howtobench.llm import local


def test_replay_without_an_endpoint_starts_no_local_server(tmp_path: Path, bench_root: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`judge --replay` with no endpoint started the llama.cpp server (and printed its notice) only to look calls
    up in the cache; on a core install it failed for want of llama-cpp-python."""
    def no_server(**_: object) -> None:
        raise AssertionError("a replay must not start the local model")

    monkeypatch.setattr(local, "local_server", no_server)
    out = tmp_path / "replayed.jsonl"
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--method", "single", "--task", "open",
                                      "--limit", "1", "--models", "deepseek-r1", "--replay", "--local-judge", "-o",
                                      str(out), "--workspace", str(tmp_path / "ws"), "--no-progress"])
    assert isinstance(result.exception, CacheMiss), result.output + repr(result.exception)
    assert f"model {local.LOCAL_MODEL}) is not cached" in str(result.exception)  # the local model's cache keys
    assert "embedded local model" not in result.output
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == []
