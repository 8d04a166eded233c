"""`howtobench data stats`: the acceptance numbers on the release, exact figures on a small benchmark."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from howtobench.cli import data as data_cli
from howtobench.data.loader import LoadReport
from howtobench.data.models import Item, Writing
from howtobench.data.stats import summarise
from howtobench.errors import RowError


def make_app() -> typer.Typer:
    """Only the data commands: these tests do not depend on other command modules importing cleanly."""
    app = typer.Typer()
    data_cli.register(app)
    return app


def test_acceptance_release_json(bench_root: Path) -> None:
    result = CliRunner().invoke(make_app(), ["data", "stats", "--data", str(bench_root), "--format", "json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    expected = {"completion": 379, "guide": 456, "open": 467}
    assert {t: stats["tasks"][t]["instructions"] for t in expected} == expected
    assert stats["tasks"]["all"]["instructions"] == 1302
    for task, n in expected.items():
        models = stats["models"][task]
        assert len(models) == 10
        assert {m["writings"] for m in models.values()} == {n}
    assert stats["models"]["guide"]["deepseek-chat"]["empty"] == 15
    assert stats["unmapped_genre"] == 0 and stats["unmapped_labels"] == {}
    assert stats["skipped_rows"] == 0
    assert sum(g["instructions"] for g in stats["genres"]["all"].values()) == 1302
    assert set(stats["genres"]["all"]) == {
        "argumentative", "comment", "poem", "prose", "fiction", "letters",
        "others", "speech", "report", "contract", "plan", "regulation",
    }  # fmt: skip
    assert stats["tasks"]["open"]["information_chars"] == {"mean": 0.0, "median": 0.0}


def test_release_table(bench_root: Path) -> None:
    result = CliRunner().invoke(make_app(), ["data", "stats", "--data", str(bench_root)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "Instructions per task" in result.output
    assert "deepseek-chat" in result.output
    assert "every sub_task label maps to a genre" in result.output


def _item(n: int, task: str, sub_task: str, instruction: str, reference: str) -> Item:
    return Item.model_validate(
        {"infer_id": f"i{n}", "task_type": task, "sub_task": sub_task, "basic_instruction": instruction,
         "reference": reference, "genre": "fiction" if sub_task == "小说" else "others"}
    )  # fmt: skip


def test_summarise_exact_numbers() -> None:
    items = [
        _item(1, "guide", "小说", "ab", "x" * 10),
        _item(2, "guide", "小说", "abcd", "x" * 20),
        _item(3, "guide", "童话", "abcdef", "x" * 60),
        _item(4, "open", "小说", "a", ""),
    ]
    writings = [
        Writing.model_validate({"infer_id": "i1", "model": "m", "output": "12345"}),
        Writing.model_validate({"infer_id": "i2", "model": "m", "output": ""}),
        Writing.model_validate({"infer_id": "i4", "model": "m", "output": "123"}),
    ]
    stats = summarise(items, writings, data="x", report=LoadReport())
    guide = stats.tasks["guide"]
    assert guide.instructions == 3
    assert (guide.instruction_chars.mean, guide.instruction_chars.median) == (4.0, 4.0)
    assert (guide.reference_chars.mean, guide.reference_chars.median) == (30.0, 20.0)
    assert stats.genres["guide"]["fiction"].instructions == 2
    assert stats.genres["all"]["fiction"].instructions == 3
    assert stats.models["guide"]["m"].model_dump() == {"writings": 2, "empty": 1, "mean_chars": 2.5}
    assert stats.models["open"]["m"].writings == 1
    assert (stats.unmapped_genre, stats.unmapped_labels) == (1, {"童话": 1})


def _small_bench(root: Path) -> Path:
    rows = [
        {"infer_id": "i1", "task_type": "guide", "sub_task": "小说", "basic_instruction": "写", "reference": "文"},
        "{broken",
    ]
    path = root / "guide" / "aligned.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_skipped_rows_are_reported(tmp_path: Path) -> None:
    path = _small_bench(tmp_path)
    result = CliRunner().invoke(make_app(), ["data", "stats", "--data", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)  # stdout is the record; the notes for a person go to stderr
    assert stats["skipped_rows"] == 1
    assert "skipped 1 bad row" in result.stderr
    assert stats["skipped"] == [f"skipped 1 bad row in {path} (first: line 2: malformed JSON: Expecting property "
                                "name enclosed in double quotes (column 2))"]


def test_strict_stops_with_file_and_line(tmp_path: Path) -> None:
    path = _small_bench(tmp_path)
    result = CliRunner().invoke(make_app(), ["data", "stats", "--data", str(tmp_path), "--strict"])
    assert isinstance(result.exception, RowError)  # main() prints it as one line and exits 2
    assert str(result.exception).startswith(f"{path}:2: malformed JSON")


def test_csv_has_numbers_a_script_can_read(bench_root: Path) -> None:
    """`data stats --format csv` wrote display strings ("52 / 46", "2,266 / 2,082") and a closing sentence."""
    result = CliRunner().invoke(make_app(), ["data", "stats", "--data", str(bench_root), "--format", "csv"])
    assert result.exit_code == 0, result.output
    blocks = [list(csv.reader(io.StringIO(block))) for block in result.stdout.strip().split("\n\n")]
    tasks = {row[0]: row for row in blocks[0][1:]}
    assert blocks[0][0][:4] == ["task", "instructions", "instruction chars mean", "instruction chars median"]
    assert tasks["completion"][1:4] == ["379", "51.8", "46.0"] and tasks["guide"][6:8] == ["2334.8", "2218.5"]
    *numbers, release = blocks  # the last block lists the release files and their sha256
    assert all(float(cell) >= 0 for block in numbers for row in block[1:] for cell in row[2:])
    assert release[0] == ["file", "sha256", "pinned sha256"] and len(release) == 35
    assert "maps to a genre" not in result.stdout
