"""The first hour, finished (issue 40, 1): `run --release` ends with the model under test, last and marked, ranked
among the comparable rows only (each model once: a re-judged shipped model replaces its paper column)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from fake_server import FakeServer
from howtobench.data.paper import paper_table4
from howtobench.judges.base import Judgment
from howtobench.report.headline import headlines
from howtobench.report.html import render_report
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from judge_replies import server_handler


def as_seen(args: list[str], cwd: Path) -> tuple[int, str]:
    """`howtobench ARGS` in a process of its own at 80 columns, stdout and stderr in the order written."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "howtobench", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
    return done.returncode, done.stdout


def _closing(out: str, first: str) -> list[str]:
    """The closing lines printed after the run directory line, unwrapped (each starts with a column name)."""
    tail = out[out.index("run directory:"):].split("\n", 1)[1]
    lines: list[str] = []
    for raw in tail.splitlines():
        if raw.startswith(first) or ": All " in raw.split(" · ")[0]:
            lines.append(raw)
        elif lines:
            lines[-1] += " " + raw.strip()
    return lines


def test_run_release_ends_with_the_model_under_test_ranked_among_eleven(fake_server: FakeServer, tmp_path: Path,
                                                                         bench_root: Path) -> None:
    fake_server.handler = server_handler()
    run_dir = tmp_path / "run"
    code, out = as_seen(["run", "--data", str(bench_root), "--task", "completion", "--limit", "1", "--release",
                         "--base-url", fake_server.base_url, "--model", "my-model", "--judge-base-url",
                         fake_server.base_url, "--judge-model", "gpt-4o-2024-11-20", "--workspace",
                         str(tmp_path / "ws"), "--run-dir", str(run_dir), "--bootstrap", "20", "--no-progress",
                         "--yes"], tmp_path)
    assert code == 0, out
    board = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    lines = board["headline"]
    shipped = paper_table4().models
    assert len(lines) == 11 and len(shipped) == 10
    # the model under test last, marked; every shipped model before it, once
    assert lines[-1].startswith("my-model (under test): All ")
    assert sorted(line.split(":")[0] for line in lines[:-1]) == sorted(shipped)
    assert not any("(under test)" in line for line in lines[:-1])
    # its rank among 11 comparable rows (the paper's 10 re-judged replace their published columns), not of 21
    ranks = [line.split(" · rank ")[1].split(" ·")[0] for line in lines]
    assert all(r.split(",")[0].endswith(" of 11") for r in ranks), ranks
    assert all(r.endswith(", the paper's 10 re-judged") for r in ranks), ranks
    assert sorted(int(r.split(" ")[0]) for r in ranks) == list(range(1, 12))  # each rank once: each model once
    # the order of the table, the model under test lifted out: the shipped lines descend by rank
    shipped_ranks = [int(r.split(" ")[0]) for r in ranks[:-1]]
    assert shipped_ranks == sorted(shipped_ranks)
    # what the terminal shows last is that line (wrapped at 80 columns)
    assert " ".join(out.split()).endswith(" ".join(lines[-1].split()))
    assert _closing(out, "my-model")[-1].startswith("my-model (under test): All ")
    assert max(len(line) for line in out.splitlines()[-4:]) <= 80
    # the paper's columns stay in the table, labelled; the report marks the model under test
    table = (run_dir / "leaderboard.md").read_text(encoding="utf-8")
    assert "paper" in table.lower()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["under_test"] == ["my-model"]
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="under-test"' in page and "my-model" in page


def _judgment(model: str, item: str, score: float) -> Judgment:
    return Judgment(method="tow", task="completion", item_id=item, genre="prose", model=model, score=score,
                    status="ok", judge_model="gpt-4o")


def test_a_comparable_paper_counts_its_columns_not_already_re_judged() -> None:
    """With the paper comparable (GPT-4o, the whole benchmark), its published columns count in the rank, each model
    once: a model re-judged here replaces its paper column; the model under test comes last, marked."""
    paper = paper_table4()
    shipped = paper.models[0]  # its published All is among the table's
    judgments = [_judgment(m, i, s) for m, s in (("mine", 9.5), (shipped, 1.0)) for i in ("c1", "c2")]
    options = LeaderboardOptions(n_boot=0, paper=paper, under_test=["mine"])
    lb = replace(build_leaderboard(judgments, options), paper_caveat=None)
    lines = headlines(lb)
    assert [line.split(":")[0] for line in lines] == [shipped, "mine (under test)"]
    # 2 judged + the paper's 9 not re-judged: 11 rows; mine at 9.5 tops them, the re-judged 1.0 is last
    assert " · rank 1 of 11, 1 of the paper's re-judged, 9 as published · " in lines[1]
    assert " · rank 11 of 11, 1 of the paper's re-judged, 9 as published · " in lines[0]
    # nothing re-judged: every published column counts
    alone = replace(build_leaderboard(judgments[:2], options), paper_caveat=None)
    assert " · rank 1 of 11 with the paper's 10" in headlines(alone)[0]
    assert "(under test)" not in headlines(alone)[0]  # one model: nothing to tell it from


def test_the_report_marks_the_model_under_test(tmp_path: Path) -> None:
    judgments = [_judgment(m, i, s) for m, s in (("mine", 5.0), ("other", 6.0)) for i in ("c1", "c2")]
    lb = build_leaderboard(judgments, LeaderboardOptions(n_boot=0, under_test=["mine"]))
    page = render_report(lb, judgments)
    assert page.count('<li class="under-test">') == 1 and '<li class="under-test">mine (under test): All ' in page
    assert '<th class="under-test" title="the model under test">mine</th>' in page
    assert 'class="label under-test">mine <span class="badge mine">under test</span>' in page
    assert 'class="label">other</div>' in page
