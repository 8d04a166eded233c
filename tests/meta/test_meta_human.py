"""Human ratings: import (JSONL/CSV, bad rows), averaging and agreement on hand-computed examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from howtobench.errors import DataError, RowError
from howtobench.meta.human import HumanRating, average_scores, load_ratings
from howtobench.meta.judgments import SkipReport


def _write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_import_with_dims_and_infer_id(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "h.jsonl",
        [
            {"item_id": "i1", "model": "m1", "rater": "r1", "score": 4, "dims": {"content": 3.5}},
            {"infer_id": "i1", "model": "m1", "rater": "r2", "score": "5"},
        ],
    )
    ratings = load_ratings(path, strict=True)
    assert ratings[0] == HumanRating("i1", "m1", "r1", 4.0, {"content": 3.5})
    assert ratings[1].item_id == "i1" and ratings[1].score == 5.0
    assert average_scores(ratings) == {("i1", "m1"): 4.5}
    assert average_scores(ratings, dim="content") == {("i1", "m1"): 3.5}


def test_csv_import_extra_columns_are_dimensions(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text("item_id,model,rater,score,format\ni1,m1,r1,3,2\ni1,m2,r1,4,\n", encoding="utf-8")
    ratings = load_ratings(path, strict=True)
    assert ratings[0].dims == {"format": 2.0}
    assert ratings[1].dims == {}


def test_bad_rows_strict_raises_file_line(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "h.jsonl",
        [
            {"item_id": "i1", "model": "m1", "rater": "r1", "score": 4},
            "{not json",
            {"item_id": "i1", "model": "m1", "rater": "r2", "score": "high"},
            {"item_id": "i1", "model": "m1", "rater": "r1", "score": 3},
            {"model": "m1", "rater": "r3", "score": 3},
        ],
    )
    with pytest.raises(RowError) as info:
        load_ratings(path, strict=True)
    assert info.value.line == 2 and str(info.value).startswith(f"{path}:2:")
    report = SkipReport()
    ratings = load_ratings(path, report=report)
    assert len(ratings) == 1
    assert [e.line for e in report.skipped] == [2, 3, 4, 5]
    assert "already rated" in report.skipped[2].reason
    assert "missing item_id" in report.skipped[3].reason


def test_csv_bad_score_names_line(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text("item_id,model,rater,score\ni1,m1,r1,3\ni1,m1,r2,nan\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"h\.csv:3: score must be finite"):
        load_ratings(path, strict=True)


def test_empty_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        load_ratings(_write_jsonl(tmp_path / "h.jsonl", ["{}"]))
