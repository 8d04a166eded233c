"""Terminal tables as a user sees them (issue 15 point 7): the leaderboard of the paper's ten models, judged from the
shared benchmark, printed by `howtobench leaderboard` at COLUMNS=80, 120 and 200, and `howtobench robustness` at 80.

The leaderboard used to be printed at 80 columns as eight (sixteen with --paper) tables of one or two columns each.
Now it is turned (models as rows) and its cells wrap between words: one table at 200 columns, and where even the
words of sixteen columns are wider than the terminal, the fewest parts. Every model name and every number of the
JSON output appears in the printed grids, whole, exactly as often as it should."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.paper import paper_table4
from table_text import NUMBER, label_cells

MODELS = sorted(paper_table4().models)
ROWS = ["Completion", "Guide", "Open", "Argumentative", "Comment (essay)", "Poem", "Prose", "Fiction", "Letters",
        "Speech", "Report", "Contract", "Plan", "Regulation", "Others", "All"]


def invoke(args: list[str], columns: int | None = None) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)} if columns else None)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


@pytest.fixture(scope="module")
def judged(bench_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ROUGE-L judgments of the ten release models on a 24-item subset covering every genre (no model needed)."""
    out = tmp_path_factory.mktemp("judged") / "rouge.jsonl"
    invoke(["judge", "--method", "rouge", "--subset", "24", "--data", str(bench_root), "-o", str(out),
            "--no-progress", "--workspace", str(out.parent / "ws")])
    return out


@pytest.fixture(scope="module")
def judged_tow(judged: Path) -> Path:
    """The same judgments as if ToW had given them (1-10, GPT-4o): the paper's columns stand only next to ToW."""
    out = judged.parent / "tow.jsonl"
    rows = [json.loads(line) for line in judged.read_text("utf-8").splitlines()]
    out.write_text("".join(json.dumps({**row, "method": "tow", "judge_model": "gpt-4o-2024-11-20",
                                       "score": None if row["score"] is None else 1 + 9 * row["score"]}) + "\n"
                           for row in rows), "utf-8")
    return out


def grids_of(output: str) -> str:
    """The printed score grids: everything above the line that says how models are ordered."""
    return output[:output.index("Models ordered by")]


def expected_numbers(judged: Path, *extra: str) -> Counter[str]:
    """Every number the grids must show, from the JSON view: each cell's mean and interval (ROUGE, a 0-1 metric, to
    four decimals), the paper's values."""
    doc = json.loads(invoke(["leaderboard", str(judged), "--format", "json", *extra]))
    return Counter(f"{rec[key]:.{digits(rec)}f}" for rec in doc["cells"] for key in ("mean", "ci_low", "ci_high")
                   if rec[key] is not None)


def digits(rec: dict[str, object]) -> int:
    return 4 if rec["method"] == "rouge" else 2


# every cell names its n and ROUGE prints four decimals: wider cells than the two-decimal ones without n
@pytest.mark.parametrize(("columns", "parts"), [(80, 4), (120, 3), (200, 2)])
def test_leaderboard_turns_models_into_rows_and_wraps_keeping_every_model_and_number(
        judged: Path, columns: int, parts: int) -> None:
    output = invoke(["leaderboard", str(judged)], columns)
    assert max(len(line) for line in output.splitlines()) <= columns
    grids = grids_of(output)
    assert grids.startswith("Leaderboard — root score (rouge) — models as rows")
    titles = re.findall(r"part\s+(\d)\s+of\s+(\d)\s+\(", grids)
    assert titles == ([(str(k), str(parts)) for k in range(1, parts + 1)] if parts > 1 else [])
    assert sorted(label_cells(grids)) == sorted(MODELS * parts)
    headers = " ".join(line for line in grids.splitlines() if line.startswith("┃"))
    for row in ROWS:
        assert all(word in headers.split() for word in row.split()), row
    assert Counter(NUMBER.findall(grids)) == expected_numbers(judged)


def test_leaderboard_with_the_papers_columns_at_eighty_columns(judged_tow: Path, judged: Path) -> None:
    """--paper adds ten reference lines (release model name, the paper's judge, "not comparable" on 24 items):
    sixteen one-column tables before."""
    output = invoke(["leaderboard", str(judged_tow), "--paper"], 80)
    grids = grids_of(output)
    assert max(len(line) for line in output.splitlines()) <= 80
    assert len(re.findall(r"part\s+\d\s+of\s+4", grids)) == 4
    reference = [f"{model} (paper, gpt-4o judge, not comparable)" for model in MODELS]
    assert sorted(label_cells(grids)) == sorted((MODELS + reference) * 4)
    assert Counter(NUMBER.findall(grids)) == expected_numbers(judged_tow, "--paper")
    # next to ROUGE's 0-1 scale the paper's ToW columns are not shown, and the table says why
    rouge = invoke(["leaderboard", str(judged), "--paper"], 80)
    assert "(paper," not in rouge
    assert "they are ToW scores (1-10), and this table also holds rouge" in " ".join(rouge.split())


def test_robustness_table_fits_an_eighty_column_terminal(bench_root: Path, tmp_path: Path) -> None:
    """The robustness table was printed 220 columns wide whatever the terminal; at 80 it is now turned, one column
    per method, each perturbation a row."""
    kinds = ["drop", "repeat", "shuffle", "truncate", "pad", "inject-start", "strip-headings", "reference"]
    output = invoke(["robustness", "--run-dir", str(tmp_path / "rob"), "--methods", "bleu,rouge", "--kinds",
                     ",".join(kinds), "--n", "6", "--per-model", "1", "--bootstrap", "20", "--data", str(bench_root),
                     "--workspace", str(tmp_path / "ws"), "--no-preflight"], 80)
    assert max(len(line) for line in output.splitlines()) <= 80
    assert "— turned to fit the terminal" in output
    assert re.search(r"┃ method\s+┃\s+bleu ┃\s+rouge ┃", output)
    for kind in kinds:
        assert re.search(rf"│ {kind}\s+│\s+[-+=]\d+\.\d+ \[[^]]+\]\S* │\s+[-+=]\d+\.\d+ \[[^]]+\]\S* │", output), kind


def test_run_prints_its_leaderboard_to_fit_eighty_columns(bench_root: Path, tmp_path: Path) -> None:
    """`run` prints the same leaderboard: the user's writings ranked among the ten release models (--release,
    ROUGE-L: no model called), models as rows."""
    items = [json.loads(line) for task in ("completion", "guide", "open")
             for line in (bench_root / task / "aligned.jsonl").read_text("utf-8").splitlines()]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps({"infer_id": item["infer_id"], "model": "mine", "output": item["reference"]},
                                       ensure_ascii=False) + "\n" for item in items), "utf-8")
    run_dir = tmp_path / "run"
    output = invoke(["run", "--data", str(bench_root), "--method", "rouge", "--writings", str(mine), "--release",
                     "--subset", "12", "--run-dir", str(run_dir), "--bootstrap", "20", "--workspace",
                     str(tmp_path / "ws"), "--no-progress"], 80)
    assert max(len(line) for line in output.splitlines()) <= 80
    grids = grids_of(output)
    assert re.search(r"models as rows,\s+part\s+1\s+of\s+4", grids)
    assert len(re.findall(r"part\s+\d\s+of\s+4", grids)) == 4
    assert sorted(label_cells(grids)) == sorted(["mine", *MODELS] * 4)
    board = json.loads((run_dir / "leaderboard.json").read_text("utf-8"))
    assert Counter(NUMBER.findall(grids)) == Counter(f"{rec[key]:.{digits(rec)}f}" for rec in board["cells"]
                                                     for key in ("mean", "ci_low", "ci_high") if rec[key] is not None)
