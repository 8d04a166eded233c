"""`leaderboard --calibration FILE` as a user runs it: calibrated cells beside the raw ones, in the reference judge's
units with intervals that carry the calibration; refused for judgments of another judge; the paper kind; and
`--compare` naming a paper-only model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from calibration_crafted import judgments, latent_writings
from test_calibrate_cli import run_main, write
from test_paper import agreeing, crafted

from howtobench.calibration.record import load_calibration
from howtobench.data.paper import paper_table4


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A calibration of judge-b onto judge-a (anchors from 150 items), and both judges' files of 100 other items."""
    tmp = tmp_path_factory.mktemp("board")
    pool, held = latent_writings(150, models=4, seed=21), latent_writings(100, models=4, seed=22)
    held = [w.__class__(f"h-{w.item_id}", w.model, w.task, w.genre, w.answers) for w in held]  # other items
    out = {"ref": write(tmp / "a.jsonl", judgments(pool, "judge-a")),
           "new": write(tmp / "b.jsonl", judgments(pool, "judge-b", shift=2)),
           "held_a": write(tmp / "held_a.jsonl", judgments(held, "judge-a")),
           "held_b": write(tmp / "held_b.jsonl", judgments(held, "judge-b", shift=2)),
           "cal": tmp / "cal.json", "tmp": tmp}
    return out


def board(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          out: Path) -> tuple[int, str, dict]:
    status, err = run_main(["leaderboard", *args, "--format", "json", "-o", str(out), "--bootstrap", "300"],
                           monkeypatch, capsys)
    return status, err, json.loads(out.read_text("utf-8")) if status == 0 else {}


def cells(data: dict, metric: str, row: str = "all") -> dict[str, dict]:
    return {c["column"]: c for c in data["cells"] if c["metric"] == metric and c["row"] == row
            and c["source"] == "ours"}


def test_calibrated_cells_land_on_the_reference_judges_all(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_main(["calibrate", str(files["ref"]), "--new", str(files["new"]), "-o", str(files["cal"]),
                            "--bootstrap", "300"], monkeypatch, capsys)
    assert status == 0, err
    _, _, truth = board([str(files["held_a"])], monkeypatch, capsys, files["tmp"] / "a.json")
    status, err, data = board([str(files["held_b"]), "--calibration", str(files["cal"]), "--nodes"], monkeypatch,
                              capsys, files["tmp"] / "b.json")
    assert status == 0, err
    assert data["calibration"] == "calibrated to judge-a on 600 anchors"
    digest = load_calibration(files["cal"]).digest
    assert digest.startswith("anchors-") and data["signature"].endswith(f"|calibration:{digest}")
    assert {"score", "calibrated", "calibrated:content", "calibrated:impression"} <= set(data["metrics"])
    raw, calibrated, reference = cells(data, "score"), cells(data, "calibrated"), cells(truth, "score")
    assert set(calibrated) == set(raw) == {f"model-{m}" for m in range(4)}
    for model, cell in calibrated.items():
        assert raw[model]["mean"] - reference[model]["mean"] > 1.0  # raw: the new judge's own units
        assert abs(cell["mean"] - reference[model]["mean"]) < 0.15
        assert cell["ci_low"] <= reference[model]["mean"] <= cell["ci_high"]
        raw_width = raw[model]["ci_high"] - raw[model]["ci_low"]
        assert cell["ci_high"] - cell["ci_low"] > raw_width * 0.9  # items and anchors, not items alone
        assert cell["n"] == raw[model]["n"]
    for task in ("completion", "guide", "open"):
        assert set(cells(data, "calibrated", task)) == set(raw)
    assert any("calibrated to judge-a on 600 anchors" in note for note in data["notes"])
    for line, model in zip(data["headline"], data["columns"], strict=True):
        cell = calibrated[model]
        assert f" · {cell['mean']:.2f} [{cell['ci_low']:.2f}, {cell['ci_high']:.2f}] calibrated to judge-a on 600 " \
               "anchors · judge judge-b · " in line


def test_judgments_of_another_judge_are_refused(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    if not files["cal"].exists():
        run_main(["calibrate", str(files["ref"]), "--new", str(files["new"]), "-o", str(files["cal"]),
                  "--bootstrap", "50"], monkeypatch, capsys)
    status, err, _ = board([str(files["held_a"]), "--calibration", str(files["cal"])], monkeypatch, capsys,
                           files["tmp"] / "x.json")
    assert status == 2
    assert err.strip() == (f"error: --calibration {files['cal']} does not fit these judgments: judge 'judge-a', "
                           "the calibration's is 'judge-b'")


def test_a_paper_calibration_places_task_and_all_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    paper = paper_table4()
    judged = crafted("judge-y", agreeing, seed=3)
    held = paper.models[4]
    anchors = write(tmp_path / "y.jsonl", [j for j in judged if j.model != held])
    cal = tmp_path / "paper.json"
    mine = write(tmp_path / "mine.jsonl", [j for j in judged if j.model == held])
    status, err = run_main(["calibrate", "--to-paper", str(mine), "--new", str(anchors), "-o", str(cal)],
                           monkeypatch, capsys)
    assert status == 0, err
    assert "all: Kendall τ" in err and "REFUSED" not in err
    placed_line = next(line for line in err.splitlines() if line.startswith(f"{held} on the paper's scale: All "))
    low, high = (float(x) for x in placed_line.split("All ", 1)[1].split("[", 1)[1].split("]", 1)[0].split(", "))
    assert low <= (paper.get("all", held) or 0.0) <= high
    status, err, data = board([str(mine), "--calibration", str(cal)], monkeypatch, capsys, tmp_path / "b.json")
    assert status == 0, err
    assert data["calibration"].startswith("calibrated to the paper's gpt-4o (Table 4) on its 9 models")
    placed = cells(data, "calibrated")[held]
    published = paper.get("all", held)
    assert published is not None and placed["ci_low"] <= published <= placed["ci_high"]
    assert set(cells(data, "calibrated", "guide")) == {held}
    assert cells(data, "calibrated", "prose") == {}  # genre rows have no line
    assert np.isfinite(placed["mean"])


def test_compare_with_a_paper_only_model_gives_the_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    first = paper_table4().models[0]
    mine = [j.model_copy(update={"model": "my-model"}) for j in crafted("judge-y", agreeing) if j.model == first]
    path = write(tmp_path / "mine.jsonl", mine)
    status, err = run_main(["leaderboard", str(path), "--compare", "my-model", "deepseek-r1"], monkeypatch, capsys)
    assert status == 2
    line = err.strip()
    assert "\n" not in line and "unknown model" not in line
    assert line.startswith("error: --compare: deepseek-r1 is a published column of the paper's Table 4")
    assert "howtobench judge --models deepseek-r1 --judge-model judge-y" in line and "calibrate --to-paper" in line


def test_report_page_shows_the_calibrated_table(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    if not files["cal"].exists():
        run_main(["calibrate", str(files["ref"]), "--new", str(files["new"]), "-o", str(files["cal"]),
                  "--bootstrap", "50"], monkeypatch, capsys)
    page = files["tmp"] / "page.html"
    status, err = run_main(["report", str(files["held_b"]), "--calibration", str(files["cal"]), "-o", str(page),
                            "--bootstrap", "50"], monkeypatch, capsys)
    assert status == 0, err
    html = page.read_text("utf-8")
    assert "root score, calibrated to judge-a on 600 anchors" in html
    assert "Calibrated cells: calibrated to judge-a on 600 anchors" in html


def test_run_with_another_judges_calibration_stops_before_any_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bench_root: Path) -> None:
    from howtobench.calibration.record import Calibration, JudgeInfo, save_calibration

    cal = tmp_path / "cal.json"
    save_calibration(Calibration(kind="anchors", reference=JudgeInfo(model="judge-a", method="tow"),
                                 new=JudgeInfo(model="judge-b", method="tow")), cal)
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"infer_id": "x", "model": "m", "output": "text"}\n', encoding="utf-8")
    status, err = run_main(["run", "--data", str(bench_root), "--writings", str(mine), "--judge-base-url",
                            "http://127.0.0.1:9/v1", "--judge-model", "judge-c", "--calibration", str(cal),
                            "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "run")],
                           monkeypatch, capsys)
    assert status == 2
    assert err.strip() == f"error: --calibration {cal} is for judge 'judge-b', this run's is 'judge-c'"
    assert not (tmp_path / "run").exists()


def test_a_runs_report_keeps_the_calibration_its_config_recorded(
        files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    if not files["cal"].exists():
        run_main(["calibrate", str(files["ref"]), "--new", str(files["new"]), "-o", str(files["cal"]),
                  "--bootstrap", "50"], monkeypatch, capsys)
    run_dir = files["tmp"] / "run"
    (run_dir / "judgments").mkdir(parents=True)
    (run_dir / "judgments" / "tow.jsonl").write_text(files["held_b"].read_text("utf-8"), encoding="utf-8")
    (run_dir / "config.yaml").write_text(f"calibration: {files['cal']}\nbootstrap: 50\n", encoding="utf-8")
    status, err = run_main(["report", str(run_dir), "-o", str(run_dir / "page.html")], monkeypatch, capsys)
    assert status == 0, err
    assert "root score, calibrated to judge-a on 600 anchors" in (run_dir / "page.html").read_text("utf-8")
