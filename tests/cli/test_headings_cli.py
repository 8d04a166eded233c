"""`howtobench headings` prints the tree of a file / stdin, or one tree per JSONL line."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from howtobench.cli import headings as headings_cli


def make_app() -> typer.Typer:
    app = typer.Typer()
    headings_cli.register(app)
    app.command("noop")(lambda: None)  # keep typer in multi-command mode
    return app


def test_file_and_stdin(tmp_path: Path) -> None:
    path = tmp_path / "w.md"
    path.write_text("# A\n## B\n", encoding="utf-8")
    result = CliRunner().invoke(make_app(), ["headings", str(path)])
    assert result.exit_code == 0, result.output
    tree = json.loads(result.output)
    assert tree["title"] == "Root" and tree["subtopics"][0]["subtopics"][0]["title"] == "B"
    piped = CliRunner().invoke(make_app(), ["headings", "-"], input="一、甲\n")
    assert json.loads(piped.output)["subtopics"][0] == {"title": "甲", "type": "chinese", "subtopics": []}


def test_jsonl_one_tree_per_line_in_order(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    rows = [{"output": "# one"}, {"output": "plain"}, {"output": "# three"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(make_app(), ["headings", "--jsonl", str(path), "--field", "output"])
    assert result.exit_code == 0, result.output
    trees = [json.loads(line) for line in result.output.splitlines()]
    assert [t["subtopics"][0]["title"] if t["subtopics"] else None for t in trees] == ["one", None, "three"]


def test_jsonl_bad_row_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text('{"output": "x"}\n{"other": 1}\n', encoding="utf-8")
    result = CliRunner().invoke(make_app(), ["headings", "--jsonl", str(path)])
    assert result.exit_code != 0
    assert "w.jsonl:2" in str(result.exception)
