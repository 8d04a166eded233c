"""`run` with a paid judge judges the user's model only, with the paper's Table 4 as labelled reference columns;
re-judging the shipped models is asked for with --release and priced on its own line first."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from fake_server import FakeServer, default_handler
from howtobench.cli.main import app
from howtobench.data.paper import paper_table4


def args(server: FakeServer, data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--data", str(data), "--subset", "3", "--base-url", server.base_url, "--model", "mine",
            "--judge-base-url", server.base_url, "--judge-model", "gpt-4o-2024-11-20", "--method", "single",
            "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run"), "--bootstrap", "10",
            "--no-progress", "--max-tokens", "64", *extra]


def test_paid_judge_judges_only_the_users_model_next_to_the_paper(fake_server: FakeServer, tmp_path: Path,
                                                                  bench_root: Path) -> None:
    fake_server.handler = default_handler
    result = CliRunner().invoke(app, [*args(fake_server, bench_root, tmp_path), "--method", "tow"])
    assert result.exit_code == 0, result.output
    judged = (tmp_path / "run" / "judgments" / "tow.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["model"] for line in judged] == ["mine"] * 3  # no shipped model re-judged
    board = json.loads((tmp_path / "run" / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["columns"] == ["mine"]
    paper_columns = {c["column"] for c in board["cells"] if c["source"] == "paper"}
    assert paper_columns == {f"{m} (paper, gpt-4o judge, not comparable)" for m in paper_table4().models}
    assert board["paper_caveat"] == "not comparable with the paper's Table 4: 3 items, a subset of its 1,302"


def test_release_is_explicit_and_priced_on_its_own_line(fake_server: FakeServer, tmp_path: Path,
                                                        bench_root: Path) -> None:
    result = CliRunner().invoke(app, [*args(fake_server, bench_root, tmp_path, "--release"), "--dry-run"])
    assert result.exit_code == 0, result.output
    mine = re.search(r"judge \(your writings\) .*\n(?:.*\n)*?\s+total\s+(\d+) calls", result.output)
    shipped = re.search(r"judge \(shipped models, --release\) .*\n(?:.*\n)*?\s+total\s+(\d+) calls", result.output)
    # 3 judgments of your writings + the judge's preflight, 30 of the shipped models' writings
    assert mine and shipped and (int(mine.group(1)), int(shipped.group(1))) == (4, 30)
    assert fake_server.requests == []
