"""Human ratings: import (JSONL/CSV, bad rows), averaging and agreement on hand-computed examples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from howtobench.errors import DataError, RowError
from howtobench.meta.human import (
    HumanRating,
    agreement,
    average_scores,
    cohen_kappa,
    krippendorff_alpha,
    load_ratings,
    round_half_up,
)
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


def test_kappa_hand_computed() -> None:
    # po = 3/4; marginals a = 1/4 each, b = (1/4, 1/4, 1/2, 0) -> pe = 1/4; kappa = (3/4 - 1/4) / (3/4) = 2/3
    assert cohen_kappa(np.array([1, 2, 3, 4.0]), np.array([1, 2, 3, 3.0])) == pytest.approx(2 / 3)
    assert list(round_half_up(np.array([3.5, 2.49, 4.5]))) == [4.0, 2.0, 5.0]


def test_agreement_hand_computed() -> None:
    # writings (1,2), (3,3), (4,5): Do = 4/6, De = 120/30 = 4 -> alpha = 1 - (2/3)/4 = 5/6
    pairs = [(1, 2), (3, 3), (4, 5)]
    ratings = [
        HumanRating(f"i{k}", "m", rater, float(score))
        for k, pair in enumerate(pairs)
        for rater, score in zip(("a", "b"), pair, strict=True)
    ]
    assert krippendorff_alpha(ratings) == pytest.approx(5 / 6)
    agr = agreement(ratings)
    assert agr.pairs == 3 and agr.writings == 3 and agr.raters == 2
    assert agr.pearson == pytest.approx(np.corrcoef([1, 3, 4], [2, 3, 5])[0, 1])
    # rounded labels a=(1,3,4), b=(2,3,5): po = 1/3, pe = 0 (no shared label except 3: 1/3*1/3) -> (1/3-1/9)/(8/9)
    assert agr.kappa == pytest.approx((1 / 3 - 1 / 9) / (8 / 9))
