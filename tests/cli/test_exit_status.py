"""Exit statuses tell the truth (issue 13, points 1 and 4), through the real console entry point `main()`.

0 every selected item judged; 2 a run-level error (one line, no row, a re-run resumes); 3 finished with
writing-level failures (count printed); 4 stopped by --max-failed-rate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_judge_cli import valid_weights

from fake_server import FakeServer, Reply
from howtobench.cli.main import main


def judge_args(server: FakeServer, bench_root: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["howtobench", "judge", "--data", str(bench_root), "--task", "guide", "--limit", "3",
            "--models", "gpt-4o-2024-11-20", "--judge-base-url", server.base_url, "--judge-model", "fake-judge",
            "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "tow.jsonl"), "--no-progress", *extra]


def run_main(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as info:
        main()
        raise SystemExit(0)  # typer's standalone mode exits itself; a plain return means 0
    return int(info.value.code or 0), capsys.readouterr().err


def rows(tmp_path: Path) -> list[dict]:
    out = tmp_path / "tow.jsonl"
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []


def test_401_stops_with_one_line_no_row_and_a_rerun_resumes(fake_server: FakeServer, bench_root: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    fake_server.handler = lambda request: Reply.error(401, "invalid api key")
    status, err = run_main(judge_args(fake_server, bench_root, tmp_path), monkeypatch, capsys)
    assert status == 2 and rows(tmp_path) == []
    assert err.startswith("howtobench judge — estimate before the first call")  # the money-first screen, then
    assert err.splitlines()[-1].startswith(f"error: {fake_server.base_url}/chat/completions answered HTTP 401")
    assert "invalid api key" in err and "Traceback" not in err
    fake_server.handler = valid_weights
    status, err = run_main(judge_args(fake_server, bench_root, tmp_path), monkeypatch, capsys)
    assert status == 0, err
    assert [r["status"] for r in rows(tmp_path)] == ["ok"] * 3


def test_replay_miss_stops_without_a_row(fake_server: FakeServer, bench_root: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_main(judge_args(fake_server, bench_root, tmp_path, "--replay"), monkeypatch, capsys)
    assert status == 2 and err.startswith("error: replay mode: call ") and "is not cached" in err
    assert rows(tmp_path) == [] and fake_server.requests == []


def test_failures_left_exit_3_and_max_failed_rate_exits_4(fake_server: FakeServer, bench_root: Path,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    fake_server.handler = lambda request: Reply.text("no JSON here")  # every judgment fails: writing-level
    status, err = run_main(judge_args(fake_server, bench_root, tmp_path, "--max-failed-rate", "0", "--parallel", "1"),
                           monkeypatch, capsys)
    assert status == 4 and "error:" not in err and err.splitlines()[-1] == (
        "stopped early: 1 of the 1 judgments finished so far failed (33% of at least 3 judgments, over "
        "--max-failed-rate 0); what finished "
        "is saved, and re-running the same command resumes")
    assert [r["status"] for r in rows(tmp_path)] == ["failed"]
    status, err = run_main(judge_args(fake_server, bench_root, tmp_path), monkeypatch, capsys)
    assert status == 3 and "3 of 3 judgments failed" in err and "--redo-failed" in err
    assert len(rows(tmp_path)) == 3  # resumed: the first failed row was kept, two more judged


def test_help_documents_the_exit_statuses(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["howtobench", "--help"], ["howtobench", "judge", "--help"], ["howtobench", "run", "--help"]):
        monkeypatch.setattr("sys.argv", argv)
        with pytest.raises(SystemExit):
            main()
        text = " ".join(capsys.readouterr().out.split())
        assert "Exit status: 0 every selected item was judged or generated (or built)" in text
        assert "3 the run finished but writing-level failures remain" in text and "4 stopped early" in text
