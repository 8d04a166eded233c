"""Creating and reopening a study: bad writing rows with file:line, seeded order, fixed settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rate_helpers import MODELS, guide_items
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.errors import ConfigError, DataError
from howtobench.rate.store import DB_NAME
from howtobench.rate.study import (
    StudySettings,
    create_study,
    item_order,
    letter,
    open_study,
    prepare_study,
    response_order,
)


def test_letters_go_on_past_z() -> None:
    assert [letter(i) for i in (0, 1, 25, 26, 27, 51, 52)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA"]


def test_orders_are_seeded_and_reproducible() -> None:
    items = [f"infer_{i}" for i in range(20)]
    assert item_order(items, 0) == item_order(list(reversed(items)), 0)
    assert sorted(item_order(items, 0)) == sorted(items)
    assert item_order(items, 0) != item_order(items, 1)
    models = list(MODELS)
    assert response_order("infer_1", models, 0) == response_order("infer_1", list(reversed(models)), 0)
    orders = {tuple(response_order(f"infer_{i}", models, 0)) for i in range(10)}
    assert len(orders) > 1  # shuffled per instruction, not one fixed order


def test_study_keeps_items_and_anonymous_letters(study_dir: Path, writings_file: Path, bench_root: Path) -> None:
    study = create_study(study_dir, [writings_file], bench_root, StudySettings(seed=7))
    first, second = guide_items(bench_root)
    assert [it.id for it in study.store.items()] == item_order([first, second], 7)
    responses = study.store.writings(first)
    assert [w.letter for w in responses] == ["A", "B", "C", "D", "E"]
    assert [w.model for w in responses] == response_order(first, MODELS, 7)
    item = study.store.item(first)
    assert item is not None and item.task == "guide" and item.reference and item.instruction
    other = create_study(study_dir.parent / "other", [writings_file], bench_root, StudySettings(seed=7))
    # Browsers share cookies across ports: two studies served side by side need their own session cookies.
    assert study.cookie.startswith("howtobench_rate_") and study.cookie != other.cookie
    reopened = open_study(study_dir)
    assert reopened.cookie == study.cookie
    for opened in (study, other, reopened):
        opened.close()


def _bad_file(tmp_path: Path, bench_root: Path) -> Path:
    item = guide_items(bench_root, 1)[0]
    lines = [
        json.dumps({"infer_id": item, "model": "m1", "output": "fine"}),
        "{not json",
        json.dumps({"infer_id": item, "output": "no model"}),
        json.dumps({"infer_id": "infer_nope", "model": "m1", "output": "unknown item"}),
        json.dumps({"infer_id": item, "model": "m1", "output": "again"}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bad_rows_are_all_reported_with_file_and_line(tmp_path: Path, bench_root: Path) -> None:
    bad = _bad_file(tmp_path, bench_root)
    with pytest.raises(DataError) as err:
        create_study(tmp_path / "study", [bad], bench_root, StudySettings())
    message = str(err.value)
    assert message.startswith("4 bad writing rows")
    for line in (2, 3, 4, 5):
        assert f"{bad}:{line}:" in message
    assert "malformed JSON" in message and "missing field 'model'" in message
    assert "'infer_nope' is not in the benchmark" in message and "duplicate writing" in message
    assert not (tmp_path / "study" / DB_NAME).exists()


def test_serve_reports_bad_rows_before_starting(tmp_path: Path, bench_root: Path) -> None:
    bad = _bad_file(tmp_path, bench_root)
    result = CliRunner().invoke(app, ["rate", "serve", "--writings", str(bad), "--study", str(tmp_path / "s"),
                                      "--data", str(bench_root), "--port", "0"])
    assert result.exit_code != 0
    assert f"{bad}:2:" in str(result.exception) or f"{bad}:2:" in result.output
    assert not (tmp_path / "s" / DB_NAME).exists()


def test_a_writing_in_two_files_is_refused(tmp_path: Path, writings_file: Path, bench_root: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_text(writings_file.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(DataError, match="is also in"):
        create_study(tmp_path / "study", [writings_file, copy], bench_root, StudySettings())


def test_reopening_keeps_settings_and_writings(study_dir: Path, writings_file: Path, bench_root: Path,
                                               tmp_path: Path) -> None:
    prepare_study(study_dir, [writings_file], bench_root, {"raters_per_writing": 3}).close()
    again = prepare_study(study_dir, [], bench_root, {})
    assert again.settings.raters_per_writing == 3
    again.close()
    prepare_study(study_dir, [writings_file], bench_root, {"raters_per_writing": 3}).close()
    with pytest.raises(ConfigError, match="raters_per_writing=3"):
        prepare_study(study_dir, [], bench_root, {"raters_per_writing": 2})
    changed = tmp_path / "changed.jsonl"
    rows = [json.loads(line) for line in writings_file.read_text(encoding="utf-8").splitlines()]
    rows[0]["output"] += " (edited)"
    changed.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match="holds other writings"):
        prepare_study(study_dir, [changed], bench_root, {})


def test_a_missing_study_says_how_to_start_one(tmp_path: Path, bench_root: Path) -> None:
    with pytest.raises(DataError, match="--writings"):
        open_study(tmp_path / "nothing")
    with pytest.raises(DataError, match="--writings"):
        prepare_study(tmp_path / "nothing", [], bench_root, {})
    with pytest.raises(ConfigError, match="unknown study mode"):
        StudySettings(mode="pairwise")  # type: ignore[arg-type]


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    return tmp_path / "study"
