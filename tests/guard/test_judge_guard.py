"""`howtobench judge --guard`: flag records the signals on each judgment; skip judges a looped writing with no
call, as a failed judgment that says why (counted like a failure)."""

from __future__ import annotations

import json
from pathlib import Path

from crafted import guide_item_and_writing, repeated_paragraph
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.main import app
from howtobench.guard.guard import SKIPPED_PREFIX


def _judge(server: FakeServer, data: Path, tmp_path: Path, writings: Path, *extra: str) -> tuple[int, list[dict]]:
    from test_judge_cli import valid_weights  # the judge CLI tests' fake judge

    server.handler = valid_weights
    out = tmp_path / f"tow{len(extra)}.jsonl"
    args = ["judge", "--data", str(data), "--task", "guide", "--writings", str(writings), "--judge-base-url",
            server.base_url, "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "-o", str(out),
            "--no-progress", *extra]
    result = CliRunner().invoke(app, args)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return result.exit_code, rows


def test_judge_guard_flag_and_skip(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
    item, writing = guide_item_and_writing(bench_root)
    path = tmp_path / "w.jsonl"
    path.write_text(json.dumps({"infer_id": item.id, "model": "looper", "output": repeated_paragraph(writing)},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    _, flagged = _judge(fake_server, bench_root, tmp_path, path, "--limit", "1", "--guard", "flag")
    assert flagged and flagged[0]["status"] != "failed" and fake_server.requests
    assert "loop_paragraphs" in flagged[0]["meta"]["guard"]["flags"]
    fake_server.reset()
    code, skipped = _judge(fake_server, bench_root, tmp_path, path, "--limit", "1", "--guard", "skip",
                           "--guard-threshold", "loop_paragraphs=0.5")
    assert code != 0 and skipped[0]["status"] == "failed"  # counted like a failure: never silently
    assert skipped[0]["failures"][0].startswith(SKIPPED_PREFIX) and skipped[0]["meta"]["guard"]["skipped"]
    assert [r for r in fake_server.requests if r.get("response_format")] == []
