"""Edge-weight distributions and the judge-vs-judge matrix on constructed data, with their CLIs and figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from meta_helpers import judgment, write_jsonl
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.judges.base import LeafResult
from howtobench.meta.judges import judge_matrix, labelled_scores
from howtobench.meta.weights import by_genre, weight_sets, weight_table

CONTENT = ["opening_ending", "language", "logic", "emotion"]


def _tow(item: str, model: str, genre: str, logic: float) -> object:
    weights = {"opening_ending": 0.1, "language": 0.3, "logic": logic, "emotion": 0.6 - logic, "plots": 0.5,
               "paragraphing": 0.25, "formatting": 0.25}
    leaves = [LeafResult(name="custom", node="content")]
    return judgment(item, model, 5.0, genre=genre, weights=weights, leaves=leaves)


def _weights_file(tmp_path: Path) -> Path:
    rows = [_tow(f"i{k}", m, "fiction", 0.1 * (k + 1)) for k in range(4) for m in ("a", "b")]
    rows.append(_tow("i9", "a", "argumentative", 0.3))
    return write_jsonl(tmp_path / "tow.jsonl", rows)  # type: ignore[arg-type]


def test_weight_distribution_counts_each_item_once(tmp_path: Path) -> None:
    from howtobench.meta.judgments import load_judgments

    sets = weight_sets(load_judgments(_weights_file(tmp_path)))
    assert len(sets) == 5 and set(sets[0].weights) == set(CONTENT)  # format leaves left out
    grouped = by_genre(sets)
    assert list(grouped) == ["argumentative", "fiction"]  # genre-table order
    assert grouped["fiction"]["logic"] == pytest.approx([0.1, 0.2, 0.3, 0.4])
    rows = {(r[0], r[1]): r for r in weight_table(sets).rows}
    logic = rows[("小说 Fiction", "logic")]
    assert logic[2] == 4 and logic[3] == pytest.approx(0.25) and logic[7] == pytest.approx(0.25)
    assert logic[4] == pytest.approx(np.std([0.1, 0.2, 0.3, 0.4]))
    all_sets = weight_sets(load_judgments(_weights_file(tmp_path)), node=None)
    assert "plots" in all_sets[0].weights


def test_weights_cli_writes_box_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the [plots] extra draws the figures")
    out = CliRunner().invoke(app, ["analyze", "weights", str(_weights_file(tmp_path)), "--out", str(tmp_path / "f"),
                                   "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "小说 Fiction,logic,4,0.250" in out.stdout
    assert (tmp_path / "f" / "weights-fiction.png").is_file()
    assert (tmp_path / "f" / "weights-argumentative.svg").is_file()


def test_judge_matrix_exact() -> None:
    base = {(f"i{k}", m): float(k + 2 * j) for k in range(4) for j, m in enumerate("xy")}
    scores = {
        "A": base,
        "B": {key: 2 * v + 1 for key, v in base.items()},
        "C": {key: -v for key, v in base.items() if key[1] == "x"},  # fewer writings: compared on the shared ones
    }
    m = judge_matrix(scores)
    assert m.r[0, 1] == pytest.approx(1.0) and m.r[0, 2] == pytest.approx(-1.0) and m.r[1, 2] == pytest.approx(-1.0)
    assert m.n[0, 2] == 4 and m.n[0, 1] == 8 and m.n[2, 2] == 4


def test_labels_and_cli_with_human(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the [plots] extra draws the figures")
    a = write_jsonl(tmp_path / "a.jsonl", [judgment(f"i{k}", "m", float(k), judge_model="gpt-4o") for k in range(5)])
    b = write_jsonl(tmp_path / "b.jsonl", [judgment(f"i{k}", "m", float(k * k)) for k in range(5)])
    c = write_jsonl(tmp_path / "c.jsonl", [judgment(f"i{k}", "m", float(-k)) for k in range(5)])
    human = tmp_path / "h.csv"
    human.write_text("item_id,model,rater,score\n" + "".join(f"i{k},m,r,{k}\n" for k in range(5)), encoding="utf-8")
    from howtobench.meta.judgments import load_judgments

    labels = list(labelled_scores({p: load_judgments(p) for p in (a, b, c)}))
    assert labels == ["gpt-4o", "tow", "tow (c)"]
    out = CliRunner().invoke(app, ["analyze", "judges", str(a), str(b), str(c), "--human", str(human),
                                   "--format", "json", "--out", str(tmp_path / "f")])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    human_row = doc["rows"][3]
    assert human_row["judge"] == "human" and human_row["gpt-4o"] == pytest.approx(1.0)
    assert human_row["tow (c)"] == pytest.approx(-1.0)
    assert (tmp_path / "f" / "judges-heatmap.png").is_file()


def test_judges_matrix_leaves_empty_writings_out_by_default(tmp_path: Path) -> None:
    """Writing i0 is empty: both judges recorded their lowest score (1). Left out (default), r is computed on
    i1..i4 only; with --empty lowest on all five (expected r from scipy on the hand-built vectors)."""
    from scipy import stats

    xs, ys = [1.0, 2.0, 5.0, 3.0, 4.0], [1.0, 4.0, 3.0, 2.0, 5.0]
    files = []
    for name, values in (("a", xs), ("b", ys)):
        rows = [judgment(f"i{k}", "m", v, method=name, status="empty" if k == 0 else "ok")
                for k, v in enumerate(values)]
        files.append(str(write_jsonl(tmp_path / f"{name}.jsonl", rows)))
    for flag, start in ((), 1), (("--empty", "lowest"), 0):
        out = CliRunner().invoke(app, ["analyze", "judges", *files, "--format", "json", *flag])
        assert out.exit_code == 0, out.output
        doc = json.loads(out.stdout)
        assert doc["rows"][0]["b"] == pytest.approx(stats.pearsonr(xs[start:], ys[start:])[0])
        assert doc["notes"][-1].startswith("1 empty judged writings " + ("left out" if start else "included"))
        assert [r["empty writings"] for r in doc["rows"]] == [1, 1]
