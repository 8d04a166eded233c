"""Run-level errors land in the call log (status "stopped", no secret) and `llm usage` shows them (issue 13)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_exit_status import judge_args, run_main

from fake_server import FakeServer, Reply

SECRET = "sk-test-0123456789abcdef"


def usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          *extra: str) -> str:
    monkeypatch.setattr("sys.argv", ["howtobench", "llm", "usage", "--workspace", str(tmp_path / "ws"), *extra])
    from howtobench.cli.main import main

    with pytest.raises(SystemExit) as info:
        main()
        raise SystemExit(0)
    assert not info.value.code
    return capsys.readouterr().out


def test_a_401_and_a_replay_miss_are_logged_and_shown_by_llm_usage(
        fake_server: FakeServer, bench_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAKE_KEY", SECRET)
    fake_server.handler = lambda request: Reply.error(401, f"Incorrect API key provided: {SECRET}")
    status, _ = run_main(judge_args(fake_server, bench_root, tmp_path, "--judge-api-key-env", "FAKE_KEY"),
                         monkeypatch, capsys)
    assert status == 2
    status, _ = run_main(judge_args(fake_server, bench_root, tmp_path, "--replay"), monkeypatch, capsys)
    assert status == 2
    rows = json.loads(usage(tmp_path, monkeypatch, capsys, "--format", "json"))
    by_purpose = {r["purpose"]: r for r in rows}
    preflight = by_purpose["preflight"]
    assert (preflight["calls"], preflight["failed"], preflight["stopped"]) == (0, 0, 1)
    [error] = preflight["run_level_errors"]
    assert error["model"] == "fake-judge" and error["count"] == 1
    assert error["error"] == (f"PermanentError: {fake_server.base_url}/chat/completions answered HTTP 401 for model "
                              "fake-judge: Incorrect API key provided: ***. Check the base URL, the model name and "
                              "the API key variable FAKE_KEY.")
    misses = [r for r in rows if r["stopped"] and r["purpose"] != "preflight"]  # the calls in flight at the stop
    assert misses and all(r["calls"] == 0 for r in misses)
    assert all(e["error"].startswith("CacheMiss: replay mode: call ") and e["error"].endswith("is not cached")
               for r in misses for e in r["run_level_errors"])
    table = usage(tmp_path, monkeypatch, capsys)
    assert "Run-level errors (the run stopped; nothing was recorded for the writing)" in " ".join(table.split())
    markdown = usage(tmp_path, monkeypatch, capsys, "--format", "markdown")
    assert f"| preflight | fake-judge | 1 | {error['error']} |" in markdown and "| CacheMiss: replay mode" in markdown
    dump = "\n".join(sqlite3.connect(tmp_path / "ws" / "calls.sqlite").iterdump())
    assert SECRET not in dump and "stopped" in dump
