"""`rate export` writes what `meta agreement` / `meta correlate` read; `rate status` shows progress and agreement."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.meta.human import load_ratings
from howtobench.rate.export import export_study
from howtobench.rate.study import Study

ALICE = (5, 4, 3, 2, 1)
BOB = (5, 3, 3, 2, 2)
# Pairs (5,5) (4,3) (3,3) (2,2) (1,2): observed 3/5; chance from the marginals 5/25; kappa (0.6-0.2)/0.8.
KAPPA = 0.5


def _rate(study: Study, rater: str, scores: tuple[int, ...]) -> str:
    item = study.store.claim_next(rater, study.settings.raters_per_writing)
    assert item is not None
    for w, score in zip(study.store.writings(item), scores, strict=True):
        body = {"score": score, "error_types": ["factual_error"] if score < 3 else []}
        rating = study.protocol.check("guide", body)
        study.store.save_rating(item, w.model, rater, rating, study.protocol.is_complete("guide", rating))
    return item


@pytest.fixture
def rated(study: Study) -> Study:
    item = _rate(study, "alice", ALICE)
    assert _rate(study, "bob", BOB) == item
    # A draft (comment, no score) on bob's next instruction is kept in the study but never exported.
    second = study.store.claim_next("bob", 2)
    assert second is not None
    draft = study.protocol.check("guide", {"comment": "later"})
    study.store.save_rating(second, study.store.writings(second)[0].model, "bob", draft, False)
    return study


def test_export_is_the_meta_ratings_format(rated: Study, tmp_path: Path) -> None:
    out = tmp_path / "ratings.jsonl"
    summary = export_study(rated, out)
    assert (summary.ratings, summary.incomplete, summary.raters, summary.writings) == (10, 1, 2, 5)
    assert summary.short_of_raters == 5  # the second instruction's five writings have no complete rating
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    first = rows[0]
    assert set(first) >= {"item_id", "model", "rater", "score", "dims", "error_types", "comment", "task", "genre"}
    ratings = load_ratings(out, strict=True)
    by_rater = {r: sorted(x.score for x in ratings if x.rater == r) for r in ("alice", "bob")}
    assert by_rater == {"alice": sorted(map(float, ALICE)), "bob": sorted(map(float, BOB))}
    assert {tuple(r["error_types"]) for r in rows if r["score"] < 3} == {("factual_error",)}


def test_meta_agreement_reads_the_export(rated: Study, tmp_path: Path) -> None:
    out = tmp_path / "ratings.jsonl"
    result = CliRunner().invoke(app, ["rate", "export", "--study", str(rated.folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 10 ratings by 2 raters of 5 writings" in result.output
    agreement = CliRunner().invoke(app, ["meta", "agreement", str(out), "--format", "json"])
    assert agreement.exit_code == 0, agreement.output
    table, size = json.loads(agreement.output)
    values = {r["statistic"]: r["value"] for r in table["rows"]}
    assert values["Cohen's κ"] == pytest.approx(KAPPA)
    assert values["Pearson r"] == pytest.approx(stats.pearsonr(ALICE, BOB)[0])
    [row] = size["rows"]
    assert (row["rater pairs"], row["writings"], row["raters"]) == (5, 5, 2)


def test_status_shows_progress_and_the_same_agreement(rated: Study) -> None:
    rated.close()
    result = CliRunner().invoke(app, ["rate", "status", "--study", str(rated.folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    raters, agreement = json.loads(result.output)
    assert raters["rows"] == [
        {"rater": "alice", "instructions": 1, "finished": 1, "skipped": 0, "responses rated": 5, "of": 5},
        {"rater": "bob", "instructions": 2, "finished": 1, "skipped": 0, "responses rated": 5, "of": 10},
    ]
    assert "5 of 10 writings have 2 complete ratings" in raters["notes"]
    [overall] = agreement["rows"]
    assert overall["rated"] == "overall score"
    assert overall["Cohen's κ"] == pytest.approx(KAPPA)
    assert overall["Pearson"] == pytest.approx(float(np.corrcoef(ALICE, BOB)[0, 1]))


def test_status_of_an_empty_study(study: Study) -> None:
    study.close()
    result = CliRunner().invoke(app, ["rate", "status", "--study", str(study.folder), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "0 of 10 writings have 2 complete ratings" in result.output
    assert "no complete rating yet" in result.output
