"""`run --panel`: the run judges with every judge of the panel, its leaderboard holds the panel's scores, its
config.yaml names the panel file so the run repeats, and the estimate has a lane per judge."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import yaml
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.main import app
from judge_replies import server_handler


def _panel(tmp_path: Path, a: FakeServer, b: FakeServer) -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(f"judges:\n  - {{name: a, base_url: '{a.base_url}', model: judge-a}}\n"
                    f"  - {{name: b, base_url: '{b.base_url}', model: judge-b}}\naggregate: median\n", encoding="utf-8")
    return path


def test_run_with_a_panel(tmp_path: Path, bench_root: Path) -> None:
    with FakeServer(server_handler()) as writer, FakeServer(server_handler()) as a, \
            FakeServer(server_handler()) as b:
        args = ["run", "--data", str(bench_root), "--subset", "2", "--base-url", writer.base_url, "--model", "mine",
                "--panel", str(_panel(tmp_path, a, b)), "--workspace", str(tmp_path / "ws"), "--run-dir",
                str(tmp_path / "run"), "--bootstrap", "10", "--no-progress", "--max-tokens", "64"]
        planned = CliRunner().invoke(app, [*args, "--dry-run"])
        assert planned.exit_code == 0, planned.output
        assert "judge a" in planned.output and "judge b" in planned.output
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert a.requests and b.requests
    rows = [json.loads(line) for line in (tmp_path / "run" / "judgments" / "tow.jsonl").read_text().splitlines()]
    assert [r["model"] for r in rows] == ["mine", "mine"]
    for r in rows:
        members = r["panel"]["members"]
        assert r["score"] == statistics.median([members["a"]["score"], members["b"]["score"]])
    config = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text(encoding="utf-8"))
    assert config["panel"] == str(tmp_path / "panel.yaml") and "judge" not in config
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert list(manifest["panel"]["judges"]) == ["a", "b"] and manifest["panel"]["rule"].startswith("median")
