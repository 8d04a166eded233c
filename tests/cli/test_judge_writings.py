"""`judge --writings` / `run --writings`: bad rows skipped and counted with file:line (--strict stops at the first);
rows merely outside the selection (--limit, --task, --models, --ids) are no bad rows and warn nothing."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items
from howtobench.run import RunSettings, run_benchmark
from howtobench.steps.settings import Execution, Selection


def _first(bench_root: Path, task: str, n: int = 1) -> list[str]:
    return [it.id for it in load_items(bench_root, [task])[:n]]


def _writings(bench_root: Path, path: Path) -> Path:
    g1, g2 = _first(bench_root, "guide", 2)
    (o1,) = _first(bench_root, "open")
    rows = [
        json.dumps({"infer_id": g1, "model": "mine", "output": "我的正文"}),  # line 1: judged
        '{"infer_id": broken',  # line 2: bad
        json.dumps({"infer_id": "no-such-item", "model": "mine", "output": "x"}),  # line 3: bad
        json.dumps({"infer_id": o1, "model": "mine", "output": "x"}),  # another task: outside --task guide
        json.dumps({"infer_id": g1, "model": "other", "output": "x"}),  # another model: outside --models mine
        json.dumps({"infer_id": g2, "model": "mine", "output": "x"}),  # second item: outside --limit 1
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _judge(bench_root: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["judge", "--method", "rouge", "--data", str(bench_root), "--task", "guide", "--limit", "1",
            "--models", "mine", "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "j.jsonl"),
            "--no-progress", *extra]


def test_bad_rows_are_skipped_and_counted(bench_root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mine = _writings(bench_root, tmp_path / "w.jsonl")
    with caplog.at_level(logging.WARNING):
        result = CliRunner().invoke(app, _judge(bench_root, tmp_path, "--writings", str(mine)))
    assert result.exit_code == 0, result.output
    judged = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(j["item_id"], j["model"]) for j in judged] == [(_first(bench_root, "guide")[0], "mine")]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"skipped 2 bad rows in {mine} (first: line 2: malformed JSON: Expecting value (column 14))"]


def test_strict_stops_at_the_first_bad_row(bench_root: Path, tmp_path: Path) -> None:
    mine = _writings(bench_root, tmp_path / "w.jsonl")
    result = CliRunner().invoke(app, _judge(bench_root, tmp_path, "--writings", str(mine), "--strict"))
    assert result.exit_code != 0 and not (tmp_path / "j.jsonl").exists()
    assert str(result.exception) == f"{mine}:2: malformed JSON: Expecting value (column 14)"


def test_release_rows_outside_the_selection_warn_nothing(bench_root: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    args = ["judge", "--method", "rouge", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--models",
            "deepseek-r1", "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "j.jsonl"), "--no-progress"]
    with caplog.at_level(logging.WARNING):
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert len((tmp_path / "j.jsonl").read_text(encoding="utf-8").splitlines()) == 1


async def test_run_writings_outside_the_selection_warn_nothing_and_are_copied(
    bench_root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """run --writings: the same rules, and the rows judged are copied into the run folder for the report."""
    mine = _writings(bench_root, tmp_path / "w.jsonl")
    settings = RunSettings(
        name="mine", run_dir=tmp_path / "run", method="rouge", generate=False, release=False, bootstrap=0,
        selection=Selection(data_dir=bench_root, tasks=("guide",), limit=1, writings=(mine,)),
        execution=Execution(workspace=tmp_path / "ws", progress=False), paper=False,
        judge=EndpointConfig(model="unused", base_urls=("http://127.0.0.1:9/v1",)),
    )
    with caplog.at_level(logging.WARNING):
        result = await run_benchmark(settings)
    assert set(result.leaderboard.columns) == {"mine", "other"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"skipped 2 bad rows in {mine} (first: line 2: malformed JSON: Expecting value (column 14))"]
    copy = tmp_path / "run" / "writings" / "given" / "w.jsonl"
    rows = {(r["infer_id"], r["model"]): r["output"] for r in map(json.loads, copy.read_text("utf-8").splitlines())}
    g1 = _first(bench_root, "guide")[0]
    assert rows == {(g1, "mine"): "我的正文", (g1, "other"): "x"}
    assert "我的正文" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    with pytest.raises(Exception, match=r"w.jsonl:2: malformed JSON"):
        await run_benchmark(settings.model_copy(update={"selection": replace(settings.selection, strict=True)}))


def test_copy_grows_with_resumes_and_says_when_a_text_changed(bench_root: Path, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    from howtobench.data.models import Writing
    from howtobench.run import copy_given_writings

    given = (tmp_path / "a" / "mine.jsonl", tmp_path / "b" / "mine.jsonl")
    settings = RunSettings(name="c", run_dir=tmp_path / "run", selection=Selection(data_dir=bench_root, writings=given),
                           execution=Execution(workspace=tmp_path / "ws"))
    first = [[Writing(infer_id="i1", model="m", output="old")], [Writing(infer_id="i9", model="m", output="z")]]
    copy_given_writings(settings, first)
    with caplog.at_level(logging.WARNING):
        paths = copy_given_writings(settings, [[Writing(infer_id="i1", model="m", output="new"),
                                                Writing(infer_id="i2", model="m", output="more")], []])
    assert [p.name for p in paths] == ["mine.jsonl", "mine-2.jsonl"]
    rows = [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines()]
    assert [(r["infer_id"], r["output"]) for r in rows] == [("i1", "new"), ("i2", "more")]
    assert json.loads(paths[1].read_text(encoding="utf-8"))["infer_id"] == "i9"
    assert [r.getMessage() for r in caplog.records] == [
        f"1 writings in {tmp_path / 'a' / 'mine.jsonl'} changed since the run copied them to {paths[0]}; their "
        "judgments are of the old text (use another --run-dir to judge the new one)"]


def test_the_closing_mean_leaves_empty_writings_out(bench_root: Path, tmp_path: Path) -> None:
    """`judge` prints a mean score: like the leaderboard it leaves the empty writing out (ROUGE-L would record 0)."""
    rows = load_items(bench_root, ["guide"])[:2]
    mine = tmp_path / "w.jsonl"
    mine.write_text(json.dumps({"infer_id": rows[0].id, "model": "mine", "output": rows[0].reference}) + "\n"
                    + json.dumps({"infer_id": rows[1].id, "model": "mine", "output": ""}) + "\n", encoding="utf-8")
    args = [a if a != "1" else "2" for a in _judge(bench_root, tmp_path, "--writings", str(mine))]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())
    assert "2 judgments (empty 1, ok 1); mean score 1.000 (empty writings left out, as the leaderboard does)" in line
