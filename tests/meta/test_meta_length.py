"""Length analysis: exact fits and correlations on constructed writings, figures written, CLI on a tiny release."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from meta_helpers import judgment, write_jsonl
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.models import Item, Writing
from howtobench.judges.base import Judgment
from howtobench.meta.length import (
    PairStat,
    attach_scores,
    fit_output_on_input,
    fit_table,
    length_data,
    length_plots,
    task_correlations,
)

INPUTS = [10, 20, 30, 40, 50]


def _item(k: int, task: str = "guide") -> Item:
    return Item(infer_id=f"i{k}", task_type=task, basic_instruction="写" * 4, information="料" * (INPUTS[k] - 4))


def _writings() -> tuple[list[Item], list[Writing]]:
    items = [_item(k) for k in range(5)]
    writings = [Writing(infer_id=f"i{k}", model=m, output="字" * (2 * INPUTS[k] + 10 + off))
                for k in range(5) for m, off in (("a", 0), ("b", 0))]
    writings.append(Writing(infer_id="i0", model="c", output=""))  # empty: length 0 by default, always counted
    return items, writings


def test_exact_fit_and_marks() -> None:
    items, writings = _writings()
    data = length_data(items, writings, empty="exclude")
    assert data.empty_skipped == 1 and data.input_length.tolist() == [10, 10, 20, 20, 30, 30, 40, 40, 50, 50]
    fit = fit_output_on_input(data, "guide")
    assert fit is not None
    assert fit.slope == pytest.approx(2.0) and fit.intercept == pytest.approx(10.0) and fit.r == pytest.approx(1.0)
    assert fit.n == 10
    assert fit_output_on_input(data, "open") is None
    assert PairStat("x", "y", 0.5, 0.04, 10).mark == "**"
    assert PairStat("x", "y", 0.5, 0.07, 10).mark == "*"
    assert PairStat("x", "y", 0.5, 0.2, 10).mark == ""


def test_empty_writings_are_counted_and_included_by_default() -> None:
    """The paper's fits use every writing: the empty one enters at output length 0 and pulls the slope down."""
    items, writings = _writings()
    data = length_data(items, writings)
    assert (data.empty_included, data.empty_skipped) == (1, 0) and len(data.keys) == 11
    assert data.output_length[-1] == 0 and data.input_length[-1] == 10
    fit = fit_output_on_input(data, "guide")
    x = np.array([10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 10], dtype=float)
    y = np.concatenate([2 * x[:10] + 10, [0.0]])
    slope = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()  # least squares by hand
    assert fit is not None and fit.n == 11 and fit.slope == pytest.approx(slope) and slope > 2.0
    assert any("1 empty writings included with output length 0" in n for n in fit_table(data).notes)
    # an empty writing's judgment has no score by default, as in the leaderboard
    js = [judgment(f"i{k}", m, 5.0) for k in range(5) for m in "ab"] + [
        Judgment(method="tow", item_id="i0", model="c", task="guide", genre="others", score=1.0, status="empty")]
    attach_scores(data, js)
    assert np.isnan(data.scores["overall"][-1]) and np.isfinite(data.scores["overall"][:-1]).all()
    with pytest.raises(ValueError, match="empty must be"):
        length_data(items, writings, empty="zero")  # type: ignore[arg-type]


def test_scores_join_and_correlations(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the [plots] extra draws the figures")
    items, writings = _writings()
    data = length_data(items, writings, empty="exclude")
    # overall falls with length exactly; content only for model a; one failed judgment has no score
    js = [judgment(f"i{k}", m, 100.0 - INPUTS[k], nodes={"content": float(k)} if m == "a" else {})
          for k in range(5) for m in "ab"]
    js[1] = judgment("i0", "b", None)
    attach_scores(data, js)
    stats_by_pair = {(s.x, s.y): s for s in task_correlations(data, "guide")}
    assert stats_by_pair[("input_length", "overall")].r == pytest.approx(-1.0)
    assert stats_by_pair[("input_length", "overall")].n == 9
    assert stats_by_pair[("output_length", "content")].r == pytest.approx(1.0)
    assert stats_by_pair[("output_length", "content")].n == 5
    assert np.isnan(data.scores["overall"][1])
    figures = length_plots(data, tmp_path / "fig")
    names = sorted(p.name for p in figures)
    assert "guide-input_length-output_length.png" in names and "guide-output_length-content.svg" in names
    assert len(names) == 10 and all(p.stat().st_size > 1000 for p in figures)


def _tiny_release(root: Path) -> None:
    for task in ("guide", "open"):
        (root / task / "inferences").mkdir(parents=True)
        rows = [{"infer_id": f"{task}{k}", "task_type": task, "sub_task": "小说", "basic_instruction": "写",
                 "information": "料" * (n - 1), "reference": "参考"} for k, n in enumerate(INPUTS)]
        (root / task / "aligned.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                                   encoding="utf-8")
        factor = 3 if task == "guide" else 5
        outs = [{"infer_id": f"{task}{k}", "model": "m", "output": "字" * (factor * n)} for k, n in enumerate(INPUTS)]
        (root / task / "inferences" / "m.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in outs), encoding="utf-8")


def test_cli_prints_pooled_slopes(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the [plots] extra draws the figures")
    _tiny_release(tmp_path / "bench")
    results = write_jsonl(tmp_path / "r.jsonl", [judgment(f"guide{k}", "m", float(k)) for k in range(5)])
    out = CliRunner().invoke(app, ["analyze", "length", "--data", str(tmp_path / "bench"), "--results", str(results),
                                   "--format", "json", "--out", str(tmp_path / "figs")])
    assert out.exit_code == 0, out.output
    fits, corr = json.loads(out.stdout)
    slopes = {r["Task"]: r["slope"] for r in fits["rows"]}
    assert slopes["Guide"] == pytest.approx(3.0) and slopes["Open"] == pytest.approx(5.0)
    assert {r["Task"]: r["paper slope"] for r in fits["rows"]} == {"Guide": 1.4, "Open": 6.1}
    guide_overall = [r for r in corr["rows"] if r["Task"] == "Guide" and r["y"] == "overall"]
    assert guide_overall[0]["r"] == pytest.approx(1.0) and guide_overall[0]["sig"] == "**"
    assert (tmp_path / "figs" / "open-input_length-output_length.png").is_file()
    bad = CliRunner().invoke(app, ["analyze", "length", "--data", str(tmp_path / "bench"), "--empty", "zero"])
    assert bad.exit_code != 0 and "--empty must be one of include, exclude" in bad.output


def test_release_slopes_match_the_paper(bench_root: Path) -> None:
    """Section 6.1 on the shared release: every writing (empty ones at length 0) gives 1.375 and 6.090, the paper's
    1.4 (Guide) and 6.1 (Open) to its precision; without the empty writings 1.394 and 6.171."""
    from howtobench.meta.length_report import analyze_length

    report = analyze_length(bench_root, tasks=["guide", "open"])
    guide, open_ = (fit_output_on_input(report.data, t) for t in ("guide", "open"))
    assert guide is not None and open_ is not None
    assert (round(guide.slope, 3), round(open_.slope, 3)) == (1.375, 6.090)
    assert (round(guide.slope, 1), round(open_.slope, 1)) == (1.4, 6.1)
    assert report.data.empty_included > 0
    without = analyze_length(bench_root, tasks=["guide", "open"], empty="exclude")
    fits = [fit_output_on_input(without.data, t) for t in ("guide", "open")]
    assert [round(f.slope, 3) for f in fits if f is not None] == [1.394, 6.171]
