"""`howtobench guard FILES...` prints per-rule counts of writings files and of guarded judgments."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from crafted import ENGLISH, guide_item_and_writing, repeated_paragraph
from typer.testing import CliRunner

from howtobench.cli import guard as guard_cli
from howtobench.data.models import Writing
from howtobench.guard.guard import Guard, GuardSettings


def make_app() -> typer.Typer:
    app = typer.Typer()
    guard_cli.register(app)
    app.command("noop")(lambda: None)  # keep typer in multi-command mode
    return app


def _rules(output: str) -> dict[str, int]:
    tables = json.loads(output)
    return {row["rule"]: row["flagged"] for row in tables[0]["rows"]}


def test_writings_file(tmp_path: Path, bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    rows = [{"infer_id": item.id, "model": m, "output": text}
            for m, text in (("a", writing), ("b", repeated_paragraph(writing)), ("c", ENGLISH))]
    path = tmp_path / "w.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(make_app(), ["guard", str(path), "--data", str(bench_root), "--format", "json"])
    assert result.exit_code == 0, result.output
    counts = _rules(result.output)
    assert counts["loop_paragraphs"] == 1 and counts["wrong_language"] == 1 and counts["stub"] == 0
    lowered = CliRunner().invoke(make_app(), ["guard", str(path), "--data", str(bench_root), "--format", "json",
                                              "--guard-threshold", "wrong_language=1.5"])
    assert _rules(lowered.output)["wrong_language"] == 0


def test_judgments_file_uses_recorded_signals(tmp_path: Path, bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    guard = Guard(GuardSettings(mode="flag"))
    text = repeated_paragraph(writing)
    judgment = guard.skipped("tow", item, Writing(infer_id=item.id, model="m", output=text), guard.check(item, text))
    bare = judgment.model_copy(update={"meta": {}, "model": "n"})
    path = tmp_path / "j.jsonl"
    path.write_text(judgment.model_dump_json() + "\n" + bare.model_dump_json() + "\n", encoding="utf-8")
    result = CliRunner().invoke(make_app(), ["guard", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    tables = json.loads(result.output)
    assert _rules(result.output)["loop_paragraphs"] == 1
    assert any("1 judgments carry no guard signals" in note for note in tables[0]["notes"])


def test_unknown_rule_is_one_line(tmp_path: Path, bench_root: Path) -> None:
    result = CliRunner().invoke(make_app(), ["guard", "--data", str(bench_root), "--guard-threshold", "loops=1"])
    assert result.exit_code != 0 and "unknown guard rule 'loops'" in str(result.exception)
