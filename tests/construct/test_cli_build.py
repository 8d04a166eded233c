"""`howtobench build ...` end to end on the fake server: every step, then the built benchmark loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from construct_helpers import EN_TEXT, ZH_TEXT, write_inputs
from typer.testing import CliRunner

from howtobench.cli.main import app as main_app
from howtobench.cli.main import build_app
from howtobench.construct.workfile import ITEMS, REVIEW
from howtobench.data.loader import load_items


def _app() -> typer.Typer:
    """The build command as the console entry point builds it (endpoint settings and all)."""
    return build_app(("build",))


def test_pipeline_on_fake_server(fake_server, tmp_path: Path) -> None:
    runner, app = CliRunner(), _app()
    src = write_inputs(tmp_path / "in.jsonl", [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b"), (ZH_TEXT, "dup")])
    d = str(tmp_path / "b")
    endpoint = ["--base-url", fake_server.base_url, "--model", "fake", "--workspace", str(tmp_path / "ws")]

    def run(*args: str) -> str:
        result = runner.invoke(app, ["build", *args])
        assert result.exit_code == 0, (result.output, result.exception)
        return result.output

    assert "kept 2 (zh 1, en 1)" in run("ingest", str(src), "--dir", d, "--min-chars", "50")
    assert re.search(r"total\s+3 calls", run("classify", "--dir", d, *endpoint, "--dry-run"))  # 2 + the preflight
    assert fake_server.requests == []  # a dry run calls nothing
    assert "classified 2 texts" in run("classify", "--dir", d, *endpoint)
    assert len(fake_server.requests) == 3
    assert fake_server.requests[0]["messages"] == [{"role": "user", "content": "ping"}]  # the preflight comes first
    out = run("filter", "--dir", d, "--min-quality", "1", *endpoint)
    assert "site-a" in out and "site-b" in out and "Quality scores per source" in out
    assert re.search(r"total\s+3 calls", run("make", "--dir", d, *endpoint, "--dry-run"))
    assert "made: completion 2, guide 2, open 2" in run("make", "--dir", d, *endpoint)
    calls = len(fake_server.requests)
    assert "made: completion 2, guide 2, open 2" in run("make", "--dir", d, *endpoint)  # resumed: nothing to do
    assert len(fake_server.requests) == calls  # not even a preflight: no text was pending
    assert (tmp_path / "b" / ITEMS).exists()
    assert "6 items for review (6 new)" in run("export", "--dir", d)
    assert (tmp_path / "b" / REVIEW).exists()
    bench = tmp_path / "bench"
    assert "wrote completion 2, guide 2, open 2 items" in run("import", "--dir", d, "--out", str(bench))
    items = load_items(bench)
    assert len(items) == 6 and {i.language for i in items} == {"zh", "en"}


def test_other_commands_run_on_the_built_benchmark(fake_server, tmp_path: Path) -> None:
    """`howtobench data stats` and `howtobench judge --method rouge` read the imported benchmark unchanged."""
    runner = CliRunner()
    src = write_inputs(tmp_path / "in.jsonl", [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b")])
    d, bench = str(tmp_path / "b"), tmp_path / "bench"
    endpoint = ["--base-url", fake_server.base_url, "--model", "fake", "--workspace", str(tmp_path / "ws")]
    for args in (["ingest", str(src), "--dir", d, "--min-chars", "50"], ["classify", "--dir", d, *endpoint],
                 ["filter", "--dir", d, "--min-quality", "1", *endpoint], ["make", "--dir", d, *endpoint],
                 ["export", "--dir", d], ["import", "--dir", d, "--out", str(bench)]):
        result = runner.invoke(main_app, ["build", *args])
        assert result.exit_code == 0, (args, result.output, result.exception)
    stats = runner.invoke(main_app, ["data", "stats", "--data", str(bench), "--format", "json"])
    assert stats.exit_code == 0, stats.output
    assert '"completion"' in stats.output and '"guide"' in stats.output and '"open"' in stats.output
    writings = tmp_path / "writings.jsonl"
    writings.write_text("".join(json.dumps({"infer_id": i.id, "model": "copy", "output": i.reference},
                                           ensure_ascii=False) + "\n" for i in load_items(bench)), encoding="utf-8")
    out = tmp_path / "rouge.jsonl"
    judged = runner.invoke(main_app, ["judge", "--method", "rouge", "--data", str(bench), "--writings",
                                      str(writings), "-o", str(out), "--no-progress"])
    assert judged.exit_code == 0, (judged.output, judged.exception)
    scores = [json.loads(line)["score"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(scores) == 6 and min(scores) > 0.99  # the reference scores ROUGE-L 1 against itself


def test_build_steps_show_the_estimate_and_refuse_above_the_threshold(fake_server, tmp_path: Path) -> None:
    runner, app = CliRunner(), _app()
    src = write_inputs(tmp_path / "in.jsonl", [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b")])
    d = str(tmp_path / "b")
    prices = tmp_path / "prices.yaml"
    prices.write_text("fake: {input: 100.0, output: 100.0}\n", encoding="utf-8")
    endpoint = ["--base-url", fake_server.base_url, "--model", "fake", "--workspace", str(tmp_path / "ws"),
                "--prices", str(prices)]
    assert runner.invoke(app, ["build", "ingest", str(src), "--dir", d, "--min-chars", "50"]).exit_code == 0
    refused = runner.invoke(app, ["build", "classify", "--dir", d, *endpoint, "--confirm-above", "0"])
    assert refused.exit_code != 0 and fake_server.requests == []
    assert "howtobench build classify — estimate before the first call" in refused.output
    done = runner.invoke(app, ["build", "classify", "--dir", d, *endpoint, "--confirm-above", "0", "--yes"])
    assert done.exit_code == 0, done.output
    assert [r["messages"][0]["content"] == "ping" for r in fake_server.requests] == [True, False, False]



def _main(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """Run the real console entry point (exit statuses are set there): (status, stdout, stderr)."""
    from howtobench.cli.main import main

    monkeypatch.setattr("sys.argv", ["howtobench", *argv])
    try:
        main()
        status = 0
    except SystemExit as exc:
        status = int(exc.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, " ".join(captured.err.split())


def test_build_failures_left_exit_3_and_max_failed_rate_exits_4(fake_server, tmp_path: Path, monkeypatch,
                                                                capsys) -> None:
    """Issue 13 point 4 for build: one exit-status rule for every command that calls a model."""
    from fake_server import Reply, default_handler

    def run(*argv: str) -> tuple[int, str]:
        status, _, err = _main(["build", *argv], monkeypatch, capsys)
        return status, err

    src = write_inputs(tmp_path / "in.jsonl", [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b")])
    d = str(tmp_path / "b")
    endpoint = ["--dir", d, "--base-url", fake_server.base_url, "--model", "fake", "--workspace",
                str(tmp_path / "ws"), "--no-preflight", "--reasks", "0"]
    assert run("ingest", str(src), "--dir", d, "--min-chars", "50")[0] == 0
    answered: list[int] = []

    def slow_after_the_first(request: dict) -> Reply:  # every call fails (writing-level); the 2nd is still
        answered.append(1)                               # in flight when the 1st failure stops the step
        return Reply.text("no JSON here", delay=0 if len(answered) == 1 else 60.0)

    fake_server.handler = slow_after_the_first
    status, err = run("classify", *endpoint, "--concurrency", "1", "--max-failed-rate", "0")
    assert status == 4 and "error:" not in err, err
    assert err.endswith(" stopped early: 1 of the 1 texts finished so far failed (50% of at least 2 texts, over "
                        "--max-failed-rate 0); what finished is saved, and re-running the same command resumes")
    stage = tmp_path / "b" / "02_classify.jsonl"
    assert [json.loads(line)["ok"] for line in stage.read_text(encoding="utf-8").splitlines()] == [False]
    fake_server.handler = lambda request: Reply.text("no JSON here")
    status, err = run("classify", *endpoint)  # resumes: the other text, which fails too
    assert status == 3 and "2 of 2 classifications failed" in err and "--retry-failed" in err, err
    fake_server.handler = default_handler  # schema-shaped replies
    status, err = run("classify", *endpoint, "--retry-failed")
    assert status == 0 and "failed" not in err, err
    fake_server.handler = lambda request: Reply.text("no JSON here")
    status, err = run("filter", *endpoint, "--min-quality", "1")
    assert status == 3 and "2 of 2 quality ratings failed" in err, err
    fake_server.handler = default_handler
    assert run("filter", *endpoint, "--min-quality", "1", "--retry-failed")[0] == 0
    fake_server.handler = lambda request: Reply.text("no JSON here")
    status, err = run("make", *endpoint)  # completion items need no call; guide and open fail for both texts
    assert status == 3 and "4 of 6 items failed" in err, err


def test_build_help_documents_the_exit_statuses(monkeypatch, capsys) -> None:
    for step in ("classify", "filter", "make"):
        status, out, _ = _main(["build", step, "--help"], monkeypatch, capsys)
        text = " ".join(out.split())
        assert status == 0 and "Exit status: 0 every selected item was judged or generated (or built)" in text
        assert "3 the run finished but writing-level failures remain" in text and "--max-failed-rate" in text


def test_a_step_draws_the_runner_loops_bar(fake_server, tmp_path: Path, monkeypatch, capsys) -> None:
    """A build step runs on the step layer's loop: its bar is the judge's and generate's (without a terminal, a line
    on stderr with the step's counters; before, a bare bar that drew nothing until the end)."""
    texts = [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b")]
    d = str(tmp_path / "b")
    assert _main(["build", "ingest", str(write_inputs(tmp_path / "in.jsonl", texts)), "--dir", d, "--min-chars",
                  "50"], monkeypatch, capsys)[0] == 0
    status, _, err = _main(["build", "classify", "--dir", d, "--base-url", fake_server.base_url, "--model", "fake",
                            "--workspace", str(tmp_path / "ws"), "--no-preflight"], monkeypatch, capsys)
    assert status == 0, err
    assert "build · classify: 2/2 (100%) · done 2 · " in err
    assert len(fake_server.requests) == 2
