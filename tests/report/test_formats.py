"""Output formats are a registry: a format registered in one module (tests/report/tsv_format.py) is a `--format`
choice of the leaderboard and of every table command, with no other file touched."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_leaderboard import hand_made
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.report import formats
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from howtobench.report.render import board_document
from howtobench.report.tables import Document, Table, render

runner = CliRunner()


@pytest.fixture
def tsv() -> Iterator[None]:
    """Importing the module is all it takes: it registers its format."""
    sys.modules.pop("tsv_format", None)
    importlib.import_module("tsv_format")
    yield
    formats.unregister("tsv")
    sys.modules.pop("tsv_format", None)


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    return path


def test_built_in_formats_come_from_the_registry() -> None:
    assert formats.names()[:4] == ("table", "markdown", "csv", "json")
    assert formats.help_text() == "table (terminal), markdown, csv or json (raw numbers, for scripts)"
    with pytest.raises(ValueError, match="unknown table format 'xml'; choose one of table, markdown, csv, json"):
        formats.output_format("xml")


def test_a_name_taken_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="output format 'csv' is registered twice"):
        formats.register(formats.TextFormat("csv", "csv", 2, lambda doc: ""))


def test_an_unregistered_format_is_refused_by_the_cli(results_file: Path) -> None:
    out = runner.invoke(app, ["leaderboard", str(results_file), "--format", "tsv"])
    assert out.exit_code == 2
    assert "tsv" in out.output


def test_leaderboard_in_a_format_of_one_module(tsv: None, results_file: Path) -> None:
    out = runner.invoke(app, ["leaderboard", str(results_file), "--format", "tsv", "--by", "task", "--seed", "7",
                              "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    blocks = out.output.split("\n\n")
    assert blocks[0].splitlines() == [
        "# Leaderboard — root score (tow)",
        "\talpha\tbeta",
        "Completion\t7.00 n=2\t5.00 n=1",
        "Guide\t7.00 n=1\t—",
        "Open\t5.00 n=1\t4.00 n=1",
        "All\t6.50 n=4\t4.50 n=2",
    ]
    assert [b.splitlines()[0] for b in blocks] == [
        "# Leaderboard — root score (tow)", "# Judged writings per model", "# Adjacent models, paired on shared items"]


def test_a_table_command_in_a_format_of_one_module(tsv: None) -> None:
    out = runner.invoke(app, ["list", "tasks", "--format", "tsv"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "# Tasks (--task)",
        "task\tinstructions\twhat the model does",
        "completion\t379\tfill the [fill in the blank] gaps of a text (no Format node in ToW)",
        "guide\t456\twrite from an instruction and an outline",
        "open\t467\twrite from the instruction alone",
    ]


def test_the_leaderboard_is_tables_like_every_other_command() -> None:
    doc = board_document(build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=0, by="task")))
    assert [t.title for t in doc.tables] == [
        "Leaderboard — root score (tow)", "Judged writings per model", "Adjacent models, paired on shared items"]
    assert all(isinstance(t, Table) for t in doc.tables)
    one = Table("t", ["a", "b"], [["x", 1.234]])
    assert render(Document([one]), "csv") == render(one, "csv") == "a,b\nx,1.23\n"


def test_an_analysis_in_a_format_of_one_module(tsv: None, tmp_path: Path) -> None:
    """`analyze judges` in TSV: the same display cells as its CSV, tab-separated under the table's title."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    other = [j.model_copy(update={"judge_model": "judge-y", "score": None if j.score is None else 10 - j.score})
             for j in hand_made()]
    second.write_text("".join(j.model_dump_json() + "\n" for j in other), encoding="utf-8")
    csv_out = runner.invoke(app, ["analyze", "judges", str(first), str(second), "--format", "csv"])
    tsv_out = runner.invoke(app, ["analyze", "judges", str(first), str(second), "--format", "tsv"])
    assert tsv_out.exit_code == 0, tsv_out.output
    title, *lines = tsv_out.output.splitlines()
    assert title.startswith("# ") and "\t" not in title
    assert lines == [line.replace(",", "\t") for line in csv_out.output.splitlines() if line]
    assert lines[0].split("\t")[:3] == ["judge", "judge-x", "judge-y"]


def test_a_format_for_machines_gets_numbers_in_columns(tsv: None) -> None:
    """What a command gives a format depends on the format's `for_machines`, not on its name: `data stats` splits
    "mean / median" into two numeric columns for TSV as for CSV, and keeps the stderr notes off stdout."""
    shown = runner.invoke(app, ["data", "stats", "--format", "tsv"])
    assert shown.exit_code == 0, shown.output
    blocks = {block.splitlines()[0]: block.splitlines()[1:] for block in shown.stdout.split("\n\n") if block}
    header, *rows = blocks["# Instructions per task"]
    assert header.split("\t") == ["task", "instructions", "instruction chars mean", "instruction chars median",
                                  "information chars mean", "information chars median", "reference chars mean",
                                  "reference chars median"]
    assert [row.split("\t")[0] for row in rows] == ["completion", "guide", "open", "all"]
    assert all(float(row.split("\t")[2]) > 0 for row in rows)  # a number, not "mean / median" text
    csv_lines = runner.invoke(app, ["data", "stats", "--format", "csv"]).stdout.splitlines()
    assert "task,instructions,instruction chars mean,instruction chars median" in "\n".join(csv_lines)
