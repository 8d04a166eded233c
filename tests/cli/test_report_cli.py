"""`howtobench report RUN_DIR` writes RUN_DIR/report.html (it wrote ./report.html into the current folder) and prints
the path; `--writings FILE` shows a user's own writings in the explorer, HTML-escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.loader import load_items
from howtobench.errors import DataError

TEXT = "<b>我的正文</b>"
ESCAPED = "&lt;b&gt;我的正文&lt;/b&gt;"


def my_writings(bench_root: Path, path: Path, model: str = "mine") -> tuple[Path, str]:
    """One writing of the first guide item by `model`; returns the file and the item id."""
    item = load_items(bench_root, ["guide"])[0].id
    path.write_text(json.dumps({"infer_id": item, "model": model, "output": TEXT}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path, item


def judged(bench_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """`judge --method rouge --writings` of the user's file: (writings file, judgments file)."""
    mine, item = my_writings(bench_root, tmp_path / "mine.jsonl")
    out = tmp_path / "j.jsonl"
    result = CliRunner().invoke(app, ["judge", "--method", "rouge", "--data", str(bench_root), "--writings", str(mine),
                                      "--ids", item, "--models", "mine", "-o", str(out), "--no-progress",
                                      "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 0, (result.output, result.exception)
    return mine, out


def test_report_of_a_run_directory_is_written_into_it(bench_root: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    mine, item = my_writings(bench_root, tmp_path / "mine.jsonl")
    run = tmp_path / "run"
    made = CliRunner().invoke(app, ["run", "--method", "rouge", "--writings", str(mine), "--ids", item, "--data",
                                    str(bench_root), "--no-release", "--run-dir", str(run), "--bootstrap", "0",
                                    "--no-progress", "--workspace", str(tmp_path / "ws")])
    assert made.exit_code == 0, (made.output, made.exception)
    (run / "report.html").unlink()  # the run wrote one; the report command must write it again, in the same place
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, (result.output, result.exception)
    page = run / "report.html"
    assert result.output == f"wrote {page} ({page.stat().st_size / 1024:,.0f} KiB)\n"
    assert list(elsewhere.iterdir()) == [] and ESCAPED in page.read_text(encoding="utf-8")


def test_report_of_judgment_files_still_defaults_to_the_current_folder(bench_root: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _, judgments = judged(bench_root, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["report", str(judgments)])
    assert result.exit_code == 0 and result.output.startswith("wrote report.html (")
    assert (tmp_path / "report.html").is_file()


def test_report_writings_shows_the_users_texts_escaped(bench_root: Path, tmp_path: Path) -> None:
    mine, judgments = judged(bench_root, tmp_path)
    without = CliRunner().invoke(app, ["report", str(judgments), "-o", str(tmp_path / "without.html")])
    assert without.exit_code == 0 and TEXT not in (page := (tmp_path / "without.html").read_text("utf-8"))
    assert ESCAPED not in page  # nothing else knows the user's text
    result = CliRunner().invoke(app, ["report", str(judgments), "--writings", str(mine), "-o",
                                      str(tmp_path / "p.html")])
    assert result.exit_code == 0, (result.output, result.exception)
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert ESCAPED in page and TEXT not in page


def test_report_writings_that_answer_no_judgment_are_an_error(bench_root: Path, tmp_path: Path) -> None:
    _, judgments = judged(bench_root, tmp_path)
    other, _ = my_writings(bench_root, tmp_path / "other.jsonl", model="someone-else")
    result = CliRunner().invoke(app, ["report", str(judgments), "--writings", str(other), "-o",
                                      str(tmp_path / "p.html")])
    assert isinstance(result.exception, DataError) and result.exception.exit_status == 2
    assert str(result.exception) == (f"{other}: none of its 1 writings was judged in the given results (its models: "
                                     "someone-else; judged models: mine)")
    assert not (tmp_path / "p.html").exists()
