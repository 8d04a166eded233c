"""The first run of a new user (issue 23, 10-11): a writer without a judge stops in seconds naming what to give,
and every command that judges ends with one line per judged model — the answer, last, on screen at 80 x 24."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cli_invoke import Invoke
from fake_server import FakeServer, default_handler
from howtobench.report.headline import headlines
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard, load_judgments

DEAD = "http://127.0.0.1:9/v1"  # nothing answers there: a stop must come before any call
NO_JUDGE_HINT = ("give the judge with --judge-base-url URL --judge-model NAME (its key with --judge-api-key-env VAR), "
                 "a metric that calls no model with --method bleu|rouge|sacrebleu, or --local-judge to let the "
                 "embedded 270M model judge (a smoke test whose scores mean nothing)")



def test_a_writer_without_a_judge_stops_in_seconds_naming_what_to_give(invoke: Invoke, tmp_path: Path,
                                                                       bench_root: Path) -> None:
    """The quickstart without its --judge-* line let the 270M model judge the writer's writings for hours."""
    started = time.monotonic()
    code, out = invoke(["run", "--data", str(bench_root), "--subset", "24", "--base-url", DEAD, "--model", "my-model",
                        "--run-dir", str(tmp_path / "run"), "--workspace", str(tmp_path / "ws"), "--no-progress"])
    assert code == 2
    assert out.strip() == f"error: a writer is given but no judge: {NO_JUDGE_HINT}"
    assert time.monotonic() - started < 30 and not (tmp_path / "run").exists()  # nothing written, nothing loaded
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"infer_id": "x", "model": "mine", "output": "text"}) + "\n", encoding="utf-8")
    code, out = invoke(["run", "--data", str(bench_root), "--writings", str(mine), "--run-dir", str(tmp_path / "r2"),
                        "--no-progress"])
    assert code == 2 and out.strip() == f"error: writings are given but no judge: {NO_JUDGE_HINT}"


def test_judge_without_a_judge_stops_unless_local_judge(invoke: Invoke, tmp_path: Path, bench_root: Path) -> None:
    base = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--models", "deepseek-r1",
            "-o", str(tmp_path / "tow.jsonl"), "--workspace", str(tmp_path / "ws"), "--no-progress"]
    code, out = invoke(base)
    assert code == 2 and out.strip() == f"error: no judge is given: {NO_JUDGE_HINT}"
    assert not (tmp_path / "tow.jsonl").exists()
    code, out = invoke([*base, "--local-judge", "--dry-run"])  # asked for: the plan of the local model's calls
    assert code == 0 and "· gemma-3-270m-local" in out, out
    code, out = invoke([*base, "--local-judge", "--judge-base-url", DEAD, "--judge-model", "m"])
    assert code == 2 and "--local-judge and --judge-base-url/--judge-model contradict each other" in out
    code, out = invoke([*base, "--method", "rouge"])  # a metric needs no judge
    assert code == 0, out


def test_local_judge_and_the_smoke_run_still_plan(invoke: Invoke, tmp_path: Path, bench_root: Path) -> None:
    writer = ["run", "--data", str(bench_root), "--subset", "2", "--base-url", DEAD, "--model", "my-model",
              "--run-dir", str(tmp_path / "run"), "--workspace", str(tmp_path / "ws"), "--no-progress", "--dry-run"]
    code, out = invoke([*writer, "--local-judge"])
    assert code == 0 and "writer · my-model" in out and "· gemma-3-270m-local" in out, out
    code, out = invoke(["run", "--data", str(bench_root), "--dry-run", "--no-progress", "--run-dir",
                        str(tmp_path / "smoke"), "--workspace", str(tmp_path / "ws")])
    assert code == 0 and "· gemma-3-270m-local" in out, out  # nothing configured: the smoke run, as before


def as_seen(args: list[str], cwd: Path) -> tuple[int, str]:
    """`howtobench ARGS` in a process of its own, stdout and stderr in one stream in the order written: what an
    80-column terminal shows."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "howtobench", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    return done.returncode, done.stdout


def _judge_args(server: FakeServer, bench_root: Path, tmp_path: Path) -> list[str]:
    return ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "3", "--models", "deepseek-r1",
            "--models", "gpt-4o-2024-11-20", "--method", "single", "--judge-base-url", server.base_url,
            "--judge-model", "gpt-4o-2024-11-20", "-o", str(tmp_path / "single.jsonl"), "--workspace",
            str(tmp_path / "ws"), "--no-progress"]


def test_judge_ends_with_one_line_per_judged_model(fake_server: FakeServer, tmp_path: Path,
                                                  bench_root: Path) -> None:
    fake_server.handler = default_handler
    code, out = as_seen(_judge_args(fake_server, bench_root, tmp_path), tmp_path)
    assert code == 0, out
    judged = load_judgments([tmp_path / "single.jsonl"])
    expected = headlines(build_leaderboard(judged, LeaderboardOptions(by="task", seed=0)))
    assert len(expected) == 2 and all(" · n=3 items · judge gpt-4o-2024-11-20 · rank " in line for line in expected)
    assert expected[0].startswith(("deepseek-r1: All ", "gpt-4o-2024-11-20: All "))
    assert " vs " in expected[0] and " on 3 shared" in expected[0]
    # the last lines printed, each wrapped between words at 80 columns: at 80 x 24 they are on screen
    assert " ".join(out.split()).endswith(" ".join(" ".join(expected).split()))
    closing = out[out.rindex(expected[0].split(" ")[0]):].splitlines()
    assert len(closing) <= 8 and max(len(line) for line in closing) <= 80


def test_run_ends_with_its_models_line_after_the_run_directory(fake_server: FakeServer, tmp_path: Path,
                                                               bench_root: Path) -> None:
    fake_server.handler = default_handler
    code, out = as_seen(["run", "--data", str(bench_root), "--subset", "3", "--base-url", fake_server.base_url,
                         "--model", "my-model", "--judge-base-url", fake_server.base_url, "--judge-model",
                         "gpt-4o-2024-11-20", "--method", "single", "--workspace", str(tmp_path / "ws"),
                         "--run-dir", str(tmp_path / "run"), "--bootstrap", "50", "--no-progress", "--max-tokens",
                         "64"], tmp_path)
    assert code == 0, out
    board = json.loads((tmp_path / "run" / "leaderboard.json").read_text(encoding="utf-8"))
    (line,) = board["headline"]
    assert line.startswith("my-model: All ") and " · n=3 items · judge gpt-4o-2024-11-20 · rank 1 of 1" in line
    tail = " ".join(out[out.index("run directory:"):].split())
    assert tail.endswith(" ".join(line.split())) and "leaderboard.md" in tail  # the answer last
