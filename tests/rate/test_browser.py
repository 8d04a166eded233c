"""The rater's path in a real headless Chromium against a real `howtobench rate serve` process.

1. One rater signs in, rates three writings, reloads and finds them kept; the export is read by `meta agreement`.
2. The issue's "done when": two raters rate the same 10 writings in the browser, the server is killed with
   SIGKILL while the second is half way and restarted, nothing saved is lost, and the export passes
   `meta agreement` and `meta correlate` against judgments of those writings (BLEU: fast, no model).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("selenium", reason="the [dev] extra installs selenium (the browser tests)")

from browser import Rater, ServeProcess
from rate_helpers import SCRIPT, write_writings
from scipy import stats
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from typer.testing import CliRunner

from chromium import start_chromium
from howtobench.cli.main import app
from howtobench.rate.study import open_study

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    chromium = start_chromium(tmp_path_factory.mktemp("chromium-profile"), ("--window-size=1280,1000",))
    yield chromium
    chromium.quit()


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{args}: {result.output}\n{result.exception!r}"
    return result.output


def test_rate_three_reload_export(driver: Any, tmp_path: Path, bench_root: Path) -> None:
    writings = write_writings(bench_root, tmp_path / "writings.jsonl")
    server = ServeProcess(tmp_path / "study", bench_root, writings)
    try:
        rater = Rater(driver, server.url)
        rater.sign_in("alice")
        rater.rate("A", 4, comment="close to the reference")
        rater.rate("B", 2, errors=("factual_error",))
        rater.rate("C", 5)
        shown = [rater.response(letter).find_element(By.CSS_SELECTOR, ".writing").text for letter in "ABCDE"]
        assert sum(SCRIPT in text for text in shown) == 1  # the model's <script> is shown as text...
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018  ... and never ran
        driver.refresh()
        assert [rater.chosen_score(letter) for letter in "ABCDE"] == [4, 2, 5, None, None]
        assert rater.comment("A") == "close to the reference"
        assert rater.status("B") == "saved" and rater.status("D") == "not rated yet"
        assert driver.find_element(By.ID, "progress").text.startswith("3 of 5 responses rated")
    finally:
        assert server.stop() == 0  # SIGTERM: a clean stop
    out = tmp_path / "ratings.jsonl"
    assert "wrote 3 ratings by 1 raters of 3 writings" in _cli("rate", "export", "--study", str(tmp_path / "study"),
                                                              "-o", str(out))
    [row] = json.loads(_cli("meta", "agreement", str(out), "--format", "json"))[1]["rows"]
    assert (row["rater pairs"], row["writings"], row["raters"]) == (0, 3, 1)


# Scores per instruction (in the order the raters meet them) and response letter A..E.
ALICE = ((5, 4, 3, 2, 1), (4, 4, 3, 2, 5))
BOB = ((5, 3, 3, 2, 1), (4, 5, 3, 1, 5))
# 7 of 10 pairs agree; chance from the marginals 19/100; kappa (0.70 - 0.19) / 0.81.
KAPPA = 0.51 / 0.81


def _rate_instruction(rater: Rater, scores: tuple[int, ...]) -> str:
    for letter, score in zip("ABCDE", scores, strict=True):
        rater.rate(letter, score, errors=("factual_error",) if score < 3 else ())
    return rater.item_id()


def test_two_raters_ten_writings_kill_and_meta(driver: Any, tmp_path: Path, bench_root: Path) -> None:
    writings = write_writings(bench_root, tmp_path / "writings.jsonl")
    study_dir = tmp_path / "study"
    server = ServeProcess(study_dir, bench_root, writings)
    rater = Rater(driver, server.url)
    rater.sign_in("alice")
    first = _rate_instruction(rater, ALICE[0])
    rater.next_instruction()
    second = _rate_instruction(rater, ALICE[1])
    rater.sign_out()
    rater.sign_in("bob")
    assert _rate_instruction(rater, BOB[0]) == first
    server.kill()  # mid-study: bob has one instruction left

    saved = open_study(study_dir)
    assert sum(r.complete for r in saved.store.ratings()) == 15
    saved.close()
    server = ServeProcess(study_dir, bench_root)  # same study, no --writings; a new port, same session cookie
    try:
        rater.url = server.url
        driver.get(f"{server.url}/rate/{first}")
        assert [rater.chosen_score(letter) for letter in "ABCDE"] == list(BOB[0])
        driver.get(f"{server.url}/rate")
        assert rater.item_id() == second
        _rate_instruction(rater, BOB[1])
    finally:
        assert server.stop() == 0

    out = tmp_path / "ratings.jsonl"
    assert "wrote 20 ratings by 2 raters of 10 writings" in _cli("rate", "export", "--study", str(study_dir),
                                                                "-o", str(out))
    table, size = json.loads(_cli("meta", "agreement", str(out), "--format", "json"))
    values = {r["statistic"]: r["value"] for r in table["rows"]}
    flat_alice, flat_bob = np.ravel(ALICE), np.ravel(BOB)
    assert values["Cohen's κ"] == pytest.approx(KAPPA)
    assert values["Pearson r"] == pytest.approx(stats.pearsonr(flat_alice, flat_bob)[0])
    [agreement] = size["rows"]
    assert (agreement["rater pairs"], agreement["writings"], agreement["raters"]) == (10, 10, 2)
    _check_correlate(tmp_path, study_dir, bench_root, writings, out, {first: 0, second: 1})


def _check_correlate(tmp_path: Path, study_dir: Path, bench_root: Path, writings: Path, ratings: Path,
                     order: dict[str, int]) -> None:
    """`meta correlate` of BLEU judgments against the exported ratings equals scipy on the known scores."""
    bleu = tmp_path / "bleu.jsonl"
    _cli("judge", "--method", "bleu", "--writings", str(writings), "--data", str(bench_root), "-o", str(bleu),
         "--workspace", str(tmp_path / "ws"), "--no-progress")
    judged = {(j["item_id"], j["model"]): j["score"] for j in map(json.loads, bleu.read_text().splitlines())}
    study = open_study(study_dir)
    letters = {(w.item_id, w.model): "ABCDE".index(w.letter) for w in study.store.writings()}
    study.close()
    human = {key: (ALICE[order[key[0]]][k] + BOB[order[key[0]]][k]) / 2 for key, k in letters.items()}
    models = sorted({m for _, m in human})
    items = sorted(order)
    judge_m = np.array([[judged[(i, m)] for m in models] for i in items])
    human_m = np.array([[human[(i, m)] for m in models] for i in items])
    system = stats.pearsonr(judge_m.mean(0), human_m.mean(0))[0]
    sample = np.mean([stats.pearsonr(judge_m[r], human_m[r])[0] for r in range(len(items))])
    tables = json.loads(_cli("meta", "correlate", str(bleu), "--human", str(ratings), "--format", "json",
                             "--bootstrap", "20", "--no-ci"))
    [system_row], [sample_row] = tables[0]["rows"], tables[1]["rows"]
    assert system_row["Guide ρ"] == pytest.approx(system)
    assert sample_row["Guide ρ"] == pytest.approx(sample)
