"""--batch-export / --batch-import as a user types them: judge and generate with only the model named (no base
URL, nothing sent), the emulated `vllm run-batch` script in between, exit 0 at each round."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app, main

EMULATOR = Path(__file__).parent.parent / "fake_run_batch.py"


def vllm_run_batch(calls: Path, out: Path, model: str) -> None:
    subprocess.run([sys.executable, str(EMULATOR), "-i", str(calls), "-o", str(out), "--model", model], check=True)


def test_judge_export_then_import(bench_root: Path, tmp_path: Path) -> None:
    calls, answers, out = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl", tmp_path / "tow.jsonl"
    base = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "2", "--models", "deepseek-chat",
            "--judge-model", "Qwen/Qwen3-8B", "-o", str(out), "--workspace", str(tmp_path / "ws"), "--no-progress"]
    exported = CliRunner().invoke(app, [*base, "--batch-export", str(calls)])
    assert exported.exit_code == 0, exported.output
    assert "round 1: 16 calls for model Qwen/Qwen3-8B" in exported.output and "preflight" not in exported.output
    assert f"vllm run-batch -i {calls} -o" in exported.output
    vllm_run_batch(calls, answers, "Qwen/Qwen3-8B")
    imported = CliRunner().invoke(app, [*base, "--batch-import", str(answers)])
    assert imported.exit_code == 0, imported.output
    assert f"imported 16 answers from {answers}" in imported.output
    assert "2 judgments (ok 2)" in imported.output
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["ok", "ok"]


def test_generate_export_then_import(bench_root: Path, tmp_path: Path) -> None:
    calls, answers, out = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl", tmp_path / "w.jsonl"
    base = ["generate", "--data", str(bench_root), "--task", "open", "--limit", "2", "--model", "my-model",
            "-o", str(out), "--workspace", str(tmp_path / "ws"), "--no-progress"]
    exported = CliRunner().invoke(app, [*base, "--batch-export", str(calls)])
    assert exported.exit_code == 0, exported.output
    assert "round 1: 2 calls for model my-model" in exported.output
    vllm_run_batch(calls, answers, "my-model")
    imported = CliRunner().invoke(app, [*base, "--batch-import", str(answers)])
    assert imported.exit_code == 0, imported.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["output"].startswith("# 标题") for r in rows)


def test_batch_and_batch_files_exclude_each_other(bench_root: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--judge-model", "m", "--batch",
                                      "--batch-export", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 2 and "choose one" in result.output


def test_a_shard_exports_only_its_items(bench_root: Path, tmp_path: Path) -> None:
    calls = tmp_path / "part1.calls.jsonl"
    result = CliRunner().invoke(app, [
        "judge", "--data", str(bench_root), "--task", "guide", "--limit", "2", "--models", "deepseek-chat",
        "--judge-model", "Qwen/Qwen3-8B", "-o", str(tmp_path / "part1.jsonl"), "--workspace", str(tmp_path / "ws"),
        "--shard", "1/2", "--batch-export", str(calls), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "round 1: 8 calls" in result.output  # 1 of the 2 items: its weights call and 7 leaves


def run_main(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`howtobench ARGV` through the console entry point: (exit status, stderr)."""
    monkeypatch.setattr(sys, "argv", ["howtobench", *argv])
    with pytest.raises(SystemExit) as info:
        main()
        raise SystemExit(0)  # typer's standalone mode exits itself; a plain return means 0
    return int(info.value.code or 0), capsys.readouterr().err


def test_an_import_without_the_exports_selection_names_the_difference_and_the_command(
        bench_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/cluster.md's recipe as a user might mistype it: exported with --subset, imported without. One line
    says what differs and gives the export's own command with --batch-import; nothing is imported or written."""
    calls, answers, out = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl", tmp_path / "tow.jsonl"
    base = ["judge", "--data", str(bench_root), "--task", "guide", "--models", "deepseek-chat",
            "--judge-model", "Qwen/Qwen3-8B", "-o", str(out), "--workspace", str(tmp_path / "ws"), "--no-progress"]
    status, err = run_main([*base, "--subset", "1", "--batch-export", str(calls)], monkeypatch, capsys)
    assert status == 0, err
    vllm_run_batch(calls, answers, "Qwen/Qwen3-8B")
    status, err = run_main([*base, "--batch-import", str(answers)], monkeypatch, capsys)
    said = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(said) == 1, err
    assert "subset: 1 at the export, none now" in said[0] and "nothing was imported" in said[0]
    matching = shlex.join(["howtobench", *base, "--subset", "1", "--batch-import", str(answers)])
    assert said[0].endswith(f"run the export's command with --batch-import: {matching}")
    assert not (tmp_path / "calls.round2.jsonl").exists() and not out.read_text()
    status, err = run_main(shlex.split(matching)[1:], monkeypatch, capsys)
    assert status == 0, err
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["ok"]
