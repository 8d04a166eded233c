"""One flag convention everywhere (-o/--out, --format table|markdown|csv|json, --models, --ids), names checked while
the command line is read — before any data is loaded or any model started — with a did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from howtobench.cli.main import app

NOWHERE = "/nonexistent/howtobench-data"  # a command that reached the data would fail on this instead


def commands() -> dict[str, Any]:
    """Every (sub)command of the CLI by its full name."""
    root = typer.main.get_command(app)
    found: dict[str, Any] = {}
    pending = [("", root)]
    while pending:
        prefix, command = pending.pop()
        for name, sub in getattr(command, "commands", {}).items():
            full = f"{prefix} {name}".strip()
            found[full] = sub
            pending.append((full, sub))
    return found


def visible_opts(command: Any) -> set[str]:
    return {opt for p in command.params if not getattr(p, "hidden", False) for opt in getattr(p, "opts", [])}


def test_every_command_follows_one_convention() -> None:
    for name, command in commands().items():
        opts = visible_opts(command)
        assert "--output" not in opts and "--json" not in opts, name
        if "--out" in opts:
            assert "-o" in opts, name  # an output file or folder is -o/--out
        fmt = next((p for p in command.params if "--format" in getattr(p, "opts", [])), None)
        if fmt is not None:
            assert all(word in str(fmt.help) for word in ("table", "markdown", "csv", "json")), name
    for name in ("judge", "run", "generate"):
        assert {"--ids", "--subset", "--limit"} <= visible_opts(commands()[name]), name
    assert "--models" in visible_opts(commands()["judge"]) and "--models" in visible_opts(commands()["run"])


def fails(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    return result.output


def test_names_are_checked_before_the_data_with_did_you_mean(tmp_path: Path) -> None:
    assert "did you mean 'rouge'?" in fails(["judge", "--method", "rogue", "--data", NOWHERE])
    assert "did you mean 'tow'?" in fails(["run", "--method", "tw", "--data", NOWHERE])
    assert "did you mean 'guide'?" in fails(["judge", "--task", "guid", "--data", NOWHERE])
    assert "did you mean 'fiction'?" in fails(["generate", "--genre", "fictoin", "--data", NOWHERE])
    assert "did you mean 'markdown'?" in fails(["leaderboard", "x.jsonl", "--format", "markdwn"])
    assert "did you mean 'json_object'?" in fails(["judge", "--judge-response-format", "json_objct",
                                                   "--data", NOWHERE])


def test_judge_dry_run_needs_no_out_and_takes_ids(tmp_path: Path, bench_root: Path,
                                                  monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    ids = ["infer_508", "infer_525"]
    args = ["judge", "--method", "rouge", "--data", str(bench_root), "--models", "deepseek-r1", "--no-progress"]
    result = CliRunner().invoke(app, [*args, *(x for i in ids for x in ("--ids", i)), "--dry-run"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, [*args, *(x for i in ids for x in ("--ids", i))])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "judgments" / "rouge.jsonl").read_text().splitlines()]
    assert sorted(r["item_id"] for r in rows) == ids
    board = CliRunner().invoke(app, ["leaderboard", "judgments/rouge.jsonl", "--format", "csv", "-o", "lb.csv",
                                     "--bootstrap", "0"])
    assert board.exit_code == 0 and (tmp_path / "lb.csv").read_text().startswith("metric,")


def test_data_stats_and_llm_usage_take_format(bench_root: Path, tmp_path: Path) -> None:
    stats = CliRunner().invoke(app, ["data", "stats", "--data", str(bench_root), "--format", "json"])
    assert stats.exit_code == 0 and json.loads(stats.output)["tasks"]["guide"]["instructions"] == 456
    markdown = CliRunner().invoke(app, ["data", "stats", "--data", str(bench_root), "--format", "markdown"])
    assert "| guide | 456 |" in markdown.output
