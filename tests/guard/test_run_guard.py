"""`run --guard skip` (ROUGE-L: no model is called): the looped writing's judgment is a skip, counted as a failure,
and config.yaml records the guard so `run --config` repeats it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from crafted import guide_item_and_writing, repeated_paragraph
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.guard.guard import SKIPPED_PREFIX


def test_run_guard_skip(tmp_path: Path, bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"infer_id": item.id, "model": "mine", "output": repeated_paragraph(writing)},
                               ensure_ascii=False) + "\n", "utf-8")
    run_dir = tmp_path / "run"
    out = CliRunner().invoke(app, ["run", "--data", str(bench_root), "--method", "rouge", "--writings", str(mine),
                                   "--no-release", "--task", "guide", "--ids", item.id, "--run-dir", str(run_dir),
                                   "--bootstrap", "20", "--workspace", str(tmp_path / "ws"), "--no-progress",
                                   "--guard", "skip", "--guard-threshold", "loop_paragraphs=0.5"])
    [row] = [json.loads(line) for line in (run_dir / "judgments" / "rouge.jsonl").read_text("utf-8").splitlines()]
    assert row["status"] == "failed" and row["failures"][0].startswith(SKIPPED_PREFIX)
    assert "loop_paragraphs" in row["meta"]["guard"]["skipped_by"]
    assert out.exit_code != 0  # a skip is counted like a failure, never silently
    board = json.loads((run_dir / "leaderboard.json").read_text("utf-8"))
    [counts] = [c for c in board["counts"] if c["column"] == "mine"]
    assert (counts["guard_flagged"], counts["guard_skipped"], counts["failed"]) == (1, 1, 1)
    assert "mine: the guard flagged 1 of 1 writings; 1 of them were skipped" in out.output
    config = yaml.safe_load((run_dir / "config.yaml").read_text("utf-8"))
    assert config["guard"] == "skip" and config["guard_threshold"] == ["loop_paragraphs=0.5"]
