"""One flag convention everywhere (-o/--out, --format table|markdown|csv|json, --models, --ids), names checked while
the command line is read — before any data is loaded or any model started — with a did-you-mean."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.cli.options import FormatOpt, IdsOpt, ModelsOpt, NoProgressOpt
from howtobench.errors import DataError

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


def option(command: Any, flag: str) -> Any:
    """The click parameter of `command` spelled `flag`, or None."""
    return next((p for p in command.params if flag in getattr(p, "opts", [])), None)


def shared_help(annotated: Any) -> str:
    """The help text of one of options.py's shared option types."""
    return str(typing.get_args(annotated)[1].help)


# Commands that draw a progress indicator without calling a model (a spinner while they bootstrap or plot).
SPINNERS = {"leaderboard", "analyze length"}
# Commands that call a model but draw no progress at all (a long-lived server prints status lines only).
NO_PROGRESS = {"serve"}


def convention_breaks(name: str, command: Any) -> list[str]:
    """Where one command departs from the convention of issue 15, in words."""
    opts, breaks = visible_opts(command), []
    if {"--output", "--json", "--progress", "--quiet"} & opts:
        breaks.append(f"spells {sorted({'--output', '--json', '--progress', '--quiet'} & opts)}")
    if ("-o" in opts) != ("--out" in opts) or ("--out" in opts and option(command, "--out").opts != ["-o", "--out"]):
        breaks.append("an output is -o/--out, both spellings on one option")
    for flag, annotated in (("--format", FormatOpt), ("--models", ModelsOpt), ("--ids", IdsOpt),
                            ("--no-progress", NoProgressOpt)):
        param = option(command, flag)
        if param is not None and param.help != shared_help(annotated):
            breaks.append(f"{flag} is not the shared option of options.py")
    calls_out = bool({"--base-url", "--judge-base-url"} & opts)
    if (calls_out or name in SPINNERS) and name not in NO_PROGRESS and "--no-progress" not in opts:
        breaks.append("draws progress but has no --no-progress")
    if "--model" in opts and "--base-url" not in opts:
        breaks.append("--model names an endpoint's model; shipped models are --models")
    task = option(command, "--task")
    if task is not None and task.callback is None:
        breaks.append("--task names are not checked as the command line is read")
    return breaks


def test_every_command_follows_one_convention() -> None:
    """-o/--out, --format table|markdown|csv|json, --models, --ids and --no-progress mean one thing everywhere: any
    command, including one added later, that spells them otherwise or lacks --no-progress while drawing fails."""
    found = commands()
    breaks = {name: b for name, command in found.items() if hasattr(command, "params")
              for b in [convention_breaks(name, command)] if b}
    assert breaks == {}
    assert all(word in shared_help(FormatOpt) for word in ("table", "markdown", "csv", "json"))
    for name in ("judge", "run", "generate"):
        assert {"--ids", "--subset", "--limit", "--no-progress"} <= visible_opts(found[name]), name
    assert "--models" in visible_opts(found["judge"]) and "--models" in visible_opts(found["run"])
    assert {"robustness", "perturb", "data download", "build classify", "build filter", "build make",
            "leaderboard", "analyze length"} <= {n for n, c in found.items() if "--no-progress" in visible_opts(c)}


def test_data_download_has_no_model_endpoint_flags() -> None:
    """Its --base-url is the release's address, not a model's: no --reasks, --response-format, --no-preflight."""
    assert visible_opts(commands()["data download"]) == {"--dest", "--base-url", "--ref", "--force", "--no-progress"}


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
    assert stats.exit_code == 0 and json.loads(stats.stdout)["tasks"]["guide"]["instructions"] == 456
    markdown = CliRunner().invoke(app, ["data", "stats", "--data", str(bench_root), "--format", "markdown"])
    assert "| guide | 456 |" in markdown.output


def test_robustness_no_progress_leaves_only_the_table(bench_root: Path, tmp_path: Path) -> None:
    """`robustness` drew its judge bar with no way to turn it off; with --no-progress the output is the table."""
    args = ["robustness", "--methods", "bleu", "--kinds", "drop", "--n", "2", "--per-model", "1", "--task", "open",
            "--bootstrap", "10", "--data", str(bench_root), "--workspace", str(tmp_path / "ws"), "--format", "csv"]
    drawn = CliRunner().invoke(app, [*args, "--run-dir", str(tmp_path / "a")])
    quiet = CliRunner().invoke(app, [*args, "--run-dir", str(tmp_path / "b"), "--no-progress"])
    assert drawn.exit_code == 0 and quiet.exit_code == 0, (drawn.output, quiet.output)
    assert "judge · bleu" in drawn.output and drawn.output.endswith(quiet.output)
    assert quiet.output.startswith("method,") and "judge · bleu" not in quiet.output and "━" not in quiet.output


def test_perturb_no_progress_prints_only_its_summary(bench_root: Path, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    source = bench_root / "open" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    (tmp_path / "w.jsonl").write_text(source.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    args = ["perturb", "w.jsonl", "--kind", "drop", "-o", "p.jsonl", "--data", str(bench_root)]
    assert "perturb · drop" in CliRunner().invoke(app, args).output
    quiet_args = [("q.jsonl" if arg == "p.jsonl" else arg) for arg in args]  # p.jsonl would resume: nothing to do
    quiet = CliRunner().invoke(app, [*quiet_args, "--no-progress"])
    assert quiet.exit_code == 0 and quiet.output == "drop: wrote 1 perturbed writings to q.jsonl\n"


def test_a_mistyped_model_among_right_ones_is_an_error_with_did_you_mean(bench_root: Path, tmp_path: Path) -> None:
    """`--models gpt-4o-2024-11-20 --models gpt4o` judged gpt-4o alone and dropped the typo without a word."""
    out = tmp_path / "b.jsonl"
    args = ["judge", "--method", "bleu", "--data", str(bench_root), "--limit", "1", "-o", str(out), "--no-progress"]
    for models, said in ((["gpt-4o-2024-11-20", "gpt4o"], "unknown model 'gpt4o' (did you mean 'gpt-4o-2024-11-20'?)"),
                         (["deepseek-r"], "unknown model 'deepseek-r' (did you mean 'deepseek-r1'?)")):
        result = CliRunner().invoke(app, [*args, *(x for m in models for x in ("--models", m))])
        assert isinstance(result.exception, DataError) and result.exception.exit_status == 2, result.output
        assert str(result.exception).startswith(f"{said}; known: claude-3-5-sonnet-20241022, ")
        assert not out.exists()
