"""Leaderboard numbers on a hand-made results file: means, counts, intervals, paired test, four outputs that agree."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app, main
from howtobench.data.paper import PaperTable, paper_table4
from howtobench.errors import ConfigError, DataError, RowError
from howtobench.judges.base import Judgment
from howtobench.judges.negotiator import repair_weights, rescale
from howtobench.judges.tree import default_tree
from howtobench.report.headline import headlines
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard, load_judgments
from howtobench.report.reference import is_paper_judge
from howtobench.report.render import board_text, fmt, to_json_data
from howtobench.stats import bootstrap_ci, rng_for

CONTENT, FORMAT = (node for node in default_tree().nodes if node.negotiated)
# item -> (task, genre)
ITEMS = {
    "c1": ("completion", "argumentative"),
    "c2": ("completion", "prose"),
    "g1": ("guide", "letters"),
    "o1": ("open", "prose"),
}


def _j(model: str, item: str, score: float | None, status: str = "ok", **nodes: float) -> Judgment:
    task, genre = ITEMS[item]
    return Judgment(
        method="tow",
        item_id=item,
        model=model,
        task=task,
        genre=genre,
        score=score,
        status=status,  # type: ignore[arg-type]
        nodes=dict(nodes),
        judge_model="judge-x",
    )


def hand_made() -> list[Judgment]:
    return [
        _j("alpha", "c1", 8.0, content=8.0, impression=7.0),
        _j("alpha", "c2", 6.0, content=6.0, impression=5.0),
        _j("alpha", "g1", 7.0, content=7.0, format=6.0, impression=8.0),
        _j("alpha", "o1", 5.0, content=4.0, format=6.0, impression=5.0),
        _j("beta", "c1", 5.0, content=5.0, impression=5.0),
        _j("beta", "c2", None, status="failed"),
        _j("beta", "g1", 1.0, status="empty", content=1.0, format=1.0, impression=1.0),
        _j("beta", "o1", 4.0, content=4.0, format=4.0, impression=4.0),
    ]


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    return path


def test_means_order_and_counts() -> None:
    lb = build_leaderboard(hand_made(), LeaderboardOptions(nodes=True, seed=7, n_boot=500))
    assert lb.columns == ("alpha", "beta")
    assert [r.key for r in lb.rows] == ["completion", "guide", "open", "argumentative", "prose", "letters", "all"]
    assert lb.cell("score", "all", "alpha").mean == pytest.approx(6.5)  # type: ignore[union-attr]
    # the failed judgment is left out (not 0); the empty writing too, by default (the authors' convention)
    beta_all = lb.cell("score", "all", "beta")
    assert beta_all is not None and beta_all.mean == pytest.approx(9 / 2) and beta_all.n == 2
    assert beta_all.n_failed == 1
    assert lb.cell("score", "guide", "beta") is None  # its only guide writing is empty
    beta_completion = lb.cell("score", "completion", "beta")
    assert beta_completion is not None and beta_completion.mean == 5.0 and beta_completion.n_failed == 1
    assert lb.cell("score", "prose", "alpha").mean == pytest.approx(5.5)  # type: ignore[union-attr]
    counts = lb.counts["beta"]
    assert (counts.judged, counts.scored, counts.failed, counts.empty) == (4, 2, 1, 1)
    assert counts.failure_rate == 0.25
    assert any("beta: 1 of 4 judgments failed" in w for w in lb.warnings)
    assert "beta: 1 empty writings, left out of the means (the authors' convention; --empty lowest scores them)" in (
        lb.warnings)
    partial = [*hand_made()[:3], hand_made()[3].model_copy(update={"status": "renormalized"})]
    warnings = build_leaderboard(partial, LeaderboardOptions(n_boot=0)).warnings
    assert any("alpha: 1 roots were renormalised" in w for w in warnings)
    # node breakdown: completion has no format node, so format rests on the two other items
    assert lb.metrics == ("score", "content", "format", "impression")
    assert lb.cell("format", "all", "alpha").mean == pytest.approx(6.0)  # type: ignore[union-attr]
    assert lb.cell("format", "completion", "alpha") is None


def test_empty_writings_lowest_is_an_option() -> None:
    """--empty lowest: the empty writing counts with the 1.0 the judge recorded; its count is shown either way."""
    lb = build_leaderboard(hand_made(), LeaderboardOptions(nodes=True, seed=7, n_boot=0, empty="lowest"))
    beta_all = lb.cell("score", "all", "beta")
    assert beta_all is not None and beta_all.mean == pytest.approx(10 / 3) and beta_all.n == 3
    assert lb.cell("score", "guide", "beta").mean == 1.0  # type: ignore[union-attr]
    assert lb.cell("format", "all", "beta").mean == pytest.approx(2.5)  # type: ignore[union-attr]  # (1 + 4) / 2
    assert (lb.counts["beta"].scored, lb.counts["beta"].empty) == (3, 1)
    assert any("beta: 1 empty writings, scored as the judge recorded them" in w for w in lb.warnings)
    excluded = build_leaderboard(hand_made(), LeaderboardOptions(n_boot=0))
    assert "|empty:lowest|" in lb.signature and "|empty:exclude|" in excluded.signature
    with pytest.raises(ValueError, match="empty must be"):
        build_leaderboard(hand_made(), LeaderboardOptions(n_boot=0, empty="zero"))  # type: ignore[arg-type]


def test_bootstrap_bounds_fixed_seed() -> None:
    lb = build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=500))
    cell = lb.cell("score", "all", "alpha")
    assert cell is not None and cell.ci_low is not None and cell.ci_high is not None
    # the same resampling, written out: 500 replicates of 4 items with the cell's own generator
    rng = rng_for(7, "score|all|alpha")
    values = np.array([8.0, 6.0, 7.0, 5.0])  # items in sorted (task, id) order
    means = values[rng.integers(0, 4, size=(500, 4))].mean(axis=1)
    assert (cell.ci_low, cell.ci_high) == (np.percentile(means, 2.5), np.percentile(means, 97.5))
    assert (round(cell.ci_low, 4), round(cell.ci_high, 4)) == (5.5, 7.5)
    again = build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=500)).cell("score", "all", "alpha")
    assert again == cell
    unresampled = build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=0))
    assert unresampled.cell("score", "all", "alpha").ci_low is None  # type: ignore[union-attr]


def test_bootstrap_ci_shrinks_with_more_items() -> None:
    rng = np.random.default_rng(0)
    small = bootstrap_ci(rng.normal(5, 1, 20), n_boot=1000, rng=rng_for(0, "a"))
    large = bootstrap_ci(rng.normal(5, 1, 2000), n_boot=1000, rng=rng_for(0, "a"))
    assert small is not None and large is not None
    assert (large[1] - large[0]) < (small[1] - small[0]) / 5


def test_paired_adjacent_models() -> None:
    (default,) = build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=0)).paired
    assert default.n_shared == 2  # c2 failed and g1 is empty for beta: neither is shared by default
    lb = build_leaderboard(hand_made(), LeaderboardOptions(seed=7, n_boot=200, empty="lowest"))
    (pair,) = lb.paired
    assert (pair.first, pair.second, pair.n_shared) == ("alpha", "beta", 3)  # c2 failed for beta: not shared
    assert pair.mean_diff == pytest.approx(((8 - 5) + (7 - 1) + (5 - 4)) / 3)
    assert pair.p_wilcoxon == pytest.approx(0.25)  # exact test, n=3, all differences positive


def test_outputs_agree(results_file: Path) -> None:
    lb = build_leaderboard(load_judgments([results_file]), LeaderboardOptions(seed=3, n_boot=300, paper=paper_table4()))
    data = to_json_data(lb)
    rows = list(csv.DictReader(io.StringIO(board_text(lb, "csv"))))
    assert len(rows) == len(data["cells"])
    for rec, line in zip(data["cells"], rows, strict=True):
        assert line["column"] == rec["column"] and line["row"] == rec["row"]
        assert float(line["mean"]) == rec["mean"]
    md = board_text(lb, "markdown")
    all_line = next(line for line in md.splitlines() if line.startswith("| All |"))
    alpha = next(r for r in data["cells"] if r["row"] == "all" and r["column"] == "alpha")
    expected = f"{fmt(alpha['mean'])} [{fmt(alpha['ci_low'])}, {fmt(alpha['ci_high'])}] n={alpha['n']}"
    assert all_line.split(" | ")[1] == expected
    # paper reference columns: DS-R1's published All is 6.10; four items judged by judge-x are not its setting
    header = md.splitlines()[md.splitlines().index("### Leaderboard — root score (tow)") + 2]
    assert "deepseek-r1 (paper, gpt-4o judge, not comparable)" in header and "DS-R1" not in header
    assert "6.10" in all_line
    assert {c["column"]: c["failed"] for c in data["counts"]} == {"alpha": 0, "beta": 1}
    assert "beta: 1 of 4 judgments failed" in md


def test_cli_formats(results_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["leaderboard", str(results_file), "--format", "json", "--seed", "3"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["columns"] == ["alpha", "beta"] and data["seed"] == 3
    md_path = tmp_path / "lb.md"
    out = runner.invoke(
        app, ["leaderboard", str(results_file), "--format", "markdown", "--seed", "3", "-o", str(md_path)]
    )
    assert out.exit_code == 0, out.output
    assert "| All | 6.50 [" in md_path.read_text(encoding="utf-8")
    table = runner.invoke(app, ["leaderboard", str(results_file), "--by", "task"])
    assert table.exit_code == 0 and "Completion" in table.output and "Argumentative" not in table.output
    for convention, beta in (("exclude", 4.5), ("lowest", 10 / 3)):
        out = runner.invoke(app, ["leaderboard", str(results_file), "--format", "json", "--empty", convention])
        cell = next(c for c in json.loads(out.output)["cells"]
                    if (c["metric"], c["row"], c["column"]) == ("score", "all", "beta"))
        assert cell["mean"] == pytest.approx(beta, abs=1e-4)


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(hand_made()[0].model_dump_json() + "\n{not json}\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"bad.jsonl:2"):
        load_judgments([path])


def test_paper_table_reading() -> None:
    paper = paper_table4()
    assert len(paper.models) == 10
    assert paper.get("all", "deepseek-r1") == 6.10 and paper.get("all", "Llama-3.3-70B-Instruct") == 4.59
    assert paper.get("completion", "gpt-4o-2024-11-20") == 6.60
    assert paper.get("regulation", "Llama-3.3-70B-Instruct") == 4.72
    for genre, avg in paper.genre_avg.items():
        mean = sum(paper.get(genre, m) or 0 for m in paper.models) / 10
        assert abs(mean - avg) <= 0.005 + 1e-9, genre


def _repaired() -> list[Judgment]:
    """alpha: c1's weights clipped (content) and uniform (format), g1's rescaled; beta: none repaired."""
    clipped = repair_weights(CONTENT, {"opening_ending": 1.5, "language": 0.5, "logic": 0.5, "emotion": -0.5})[1]
    uniform = repair_weights(FORMAT, {"plots": 0.5, "paragraphing": None, "formatting": 0.0})[1]
    rescaled = rescale(FORMAT, {"plots": 0.33, "paragraphing": 0.33, "formatting": 0.33})[1]
    notes = {"c1": ["constraints still broken after 2 re-ask(s)", clipped, uniform], "g1": [rescaled]}
    return [j.model_copy(update={"weight_repairs": notes.get(j.item_id, [])}) if j.model == "alpha" else j
            for j in hand_made()]


def test_weight_repairs_counted_next_to_failures(tmp_path: Path) -> None:
    """Judgments on repaired J_W weights are counted per model (by kind) and per cell, in every output."""
    lb = build_leaderboard(_repaired(), LeaderboardOptions(seed=3, n_boot=0))
    alpha, beta = lb.counts["alpha"], lb.counts["beta"]
    kinds = (alpha.weights_clipped, alpha.weights_uniform, alpha.weights_rescaled)
    assert alpha.weights_repaired == 2 and kinds == (1, 1, 1)
    assert beta.weights_repaired == 0
    assert [lb.cell("score", row, "alpha").n_weights_repaired for row in ("completion", "guide", "open", "all")] == [  # type: ignore[union-attr]
        1, 1, 0, 2]
    warning = ("alpha: the edge weights of 2 of 4 judgments were repaired after J_W gave invalid ones (moved to the "
               "nearest valid plan 1, uniform 1/n 1, sum near 1 rescaled 1)")
    assert any(w.startswith(warning) for w in lb.warnings)
    counts = {c["column"]: c for c in to_json_data(lb)["counts"]}
    assert (counts["alpha"]["weights_repaired"], counts["alpha"]["failed"]) == (2, 0)
    assert (counts["beta"]["weights_repaired"], counts["beta"]["failed"]) == (0, 1)
    csv_rows = list(csv.DictReader(io.StringIO(board_text(lb, "csv"))))
    assert next(r for r in csv_rows if (r["row"], r["column"]) == ("all", "alpha"))["n_weights_repaired"] == "2"
    md = board_text(lb, "markdown").splitlines()
    header = next(line for line in md if line.startswith("| model |"))
    assert "| failed % | weights repaired |" in header
    alpha_line = next(line for line in md if line.startswith("| alpha |"))
    assert alpha_line.split(" | ")[-1].rstrip(" |") == "2" and warning in "\n".join(md)
    path = tmp_path / "tow.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in _repaired()), encoding="utf-8")
    shown = CliRunner().invoke(app, ["leaderboard", str(path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "weights repaired" in shown.output and "edge weights of 2 of 4" in shown.output


def _against_order() -> list[Judgment]:
    """gamma's failure on c2 lifts its own mean above delta's, although delta wins on every shared item."""
    return [
        _j("gamma", "c1", 6.0), _j("gamma", "g1", 6.0), _j("gamma", "c2", None, status="failed"),
        _j("delta", "c1", 7.0), _j("delta", "g1", 7.0), _j("delta", "c2", 1.0),
    ]


def test_pair_against_the_order_of_means_is_flagged(tmp_path: Path) -> None:
    lb = build_leaderboard(_against_order(), LeaderboardOptions(seed=1, n_boot=100))
    # means over own items: gamma (6 + 6) / 2 = 6 > delta (7 + 7 + 1) / 3 = 5; shared items c1, g1: -1 each
    assert lb.columns == ("gamma", "delta") and lb.order_scores == {"gamma": 6.0, "delta": 5.0}
    (pair,) = lb.paired
    assert (pair.n_shared, pair.mean_diff, pair.against_order) == (2, -1.0, True)
    assert any("gamma ranks above delta" in w and "delta scores higher (paired difference -1.0000)" in w
               for w in lb.warnings)
    data = to_json_data(lb)
    assert data["paired"][0]["against_order"] is True and data["order"]["by"] == "means"
    assert "| gamma vs delta | 2 | -1.0000 [-1.00, -1.00] | 0.5 | REVERSED |" in board_text(lb, "markdown")
    assert "| pair (adjacent in the order) | shared items | difference [95% CI] | Wilcoxon p | sign on shared items |" \
        in board_text(lb, "markdown")
    assert {line["order"] for line in csv.DictReader(io.StringIO(board_text(lb, "csv")))} == {"means"}
    assert lb.signature.endswith("|order:means")


def test_order_on_shared_items(tmp_path: Path) -> None:
    lb = build_leaderboard(_against_order(), LeaderboardOptions(seed=1, n_boot=100, order="shared"))
    # only c1 and g1 have a score for both: gamma 6, delta 7
    assert lb.columns == ("delta", "gamma") and lb.order_items == 2
    assert lb.order_scores == {"gamma": 6.0, "delta": 7.0}
    (pair,) = lb.paired
    assert pair.mean_diff == 1.0 and not pair.against_order
    assert not any("ranks above" in w for w in lb.warnings)
    assert "Models ordered by: mean over the 2 items every model has a score for." in board_text(lb, "markdown")
    rows = list(csv.DictReader(io.StringIO(board_text(lb, "csv"))))
    assert {(r["column"], r["rank"], r["order"]) for r in rows if r["row"] == "all"} == {
        ("delta", "1", "shared-2"), ("gamma", "2", "shared-2")}
    path = tmp_path / "r.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in _against_order()), encoding="utf-8")
    out = CliRunner().invoke(app, ["leaderboard", str(path), "--order", "shared", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["columns"] == ["delta", "gamma"]


def test_order_on_shared_items_needs_one() -> None:
    from howtobench.errors import DataError

    js = [_j("gamma", "c1", 6.0), _j("delta", "g1", 7.0)]
    with pytest.raises(DataError, match="no item has a score for every model"):
        build_leaderboard(js, LeaderboardOptions(n_boot=0, order="shared"))


def test_a_cell_of_one_item_shows_n_and_no_interval() -> None:
    """A resample of one value is that value: [7.00, 7.00] would read as certainty."""
    lb = build_leaderboard(hand_made(), LeaderboardOptions(seed=3, n_boot=300))
    one = lb.cell("score", "guide", "alpha")
    assert one is not None and (one.mean, one.n, one.ci_low, one.ci_high) == (7.0, 1, None, None)
    md = board_text(lb, "markdown")
    assert next(line for line in md.splitlines() if line.startswith("| Guide |")) == "| Guide | 7.00 n=1 | — |"
    assert next(line for line in md.splitlines() if line.startswith("| All |")) == \
        "| All | 6.50 [5.50, 7.50] n=4 | 4.50 [4.00, 5.00] n=2 |"
    rec = next(r for r in to_json_data(lb)["cells"] if (r["row"], r["column"]) == ("guide", "alpha"))
    assert (rec["n"], rec["ci_low"], rec["ci_high"]) == (1, None, None)


def test_headline_is_the_answer_first() -> None:
    lb = build_leaderboard(hand_made(), LeaderboardOptions(seed=3, n_boot=300))
    assert headlines(lb) == [
        "alpha: All 6.50 [5.50, 7.50] · n=4 items · judge judge-x · rank 1 of 2 · vs beta: +2.00 [+1.00, +3.00] on 2 "
        "shared",
        "beta: All 4.50 [4.00, 5.00] · n=2 items · 1 failed · judge judge-x · rank 2 of 2 · vs alpha: −2.00 "
        "[−3.00, −1.00] on 2 shared",
    ]
    assert to_json_data(lb)["headline"] == headlines(lb)
    assert board_text(lb, "markdown").startswith("## Leaderboard\n\n- alpha: All 6.50 [5.50, 7.50] · n=4 items")


def _paper_of(items: dict[str, int]) -> PaperTable:
    return replace(paper_table4(), items=items)


def test_paper_columns_comparable_only_for_gpt4o_on_the_whole_benchmark() -> None:
    whole = _paper_of({"completion": 2, "guide": 1, "open": 1})  # the four items of hand_made() are "everything"
    gpt4o = [j.model_copy(update={"judge_model": "gpt-4o-2024-11-20"}) for j in hand_made()]
    lb = build_leaderboard(gpt4o, LeaderboardOptions(n_boot=0, paper=whole))
    assert lb.paper_caveat is None and to_json_data(lb)["paper_comparable"] is True
    assert "deepseek-r1 (paper, gpt-4o judge)" in board_text(lb, "markdown")
    other = build_leaderboard(hand_made(), LeaderboardOptions(n_boot=0, paper=whole))
    assert other.paper_caveat == "not comparable with the paper's Table 4: judged by judge-x, not GPT-4o"
    subset = build_leaderboard(gpt4o, LeaderboardOptions(n_boot=0, paper=paper_table4()))
    assert subset.paper_caveat == "not comparable with the paper's Table 4: 4 items, a subset of its 1,302"
    md = board_text(subset, "markdown")
    assert "Reference columns not comparable with the paper's Table 4: 4 items, a subset of its 1,302." in md
    assert "deepseek-r1 (paper, gpt-4o judge, not comparable)" in md
    assert [is_paper_judge(n) for n in ("gpt-4o", "openai/gpt-4o-2024-08-06", "GPT-4o", "gpt-4o-mini", "gpt-4.1",
                                        None)] == [True, True, True, False, False, False]


def test_methods_are_never_ranked_paired_or_tested_against_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A 1-10 ToW root and a 0-1 ROUGE-L in one leaderboard were ranked and tested (+5.46, p = 1.8e-05) without a
    word: now one line refuses, in the library and in the command, before any number is printed."""
    rouge = [j.model_copy(update={"method": "rouge", "score": 0.2, "judge_model": None}) for j in hand_made()]
    with pytest.raises(DataError, match=r"^these judgments are of 2 methods \(rouge, tow\): a leaderboard ranks"):
        build_leaderboard([*hand_made(), *rouge], LeaderboardOptions(n_boot=0))
    tow_file, rouge_file = tmp_path / "tow.jsonl", tmp_path / "rouge.jsonl"
    tow_file.write_text("".join(j.model_dump_json() + "\n" for j in hand_made()), encoding="utf-8")
    rouge_file.write_text("".join(j.model_dump_json() + "\n" for j in rouge), encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["howtobench", "leaderboard", str(tow_file), str(rouge_file), "--no-progress"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code not in (0, None)
    seen = capsys.readouterr()
    assert seen.out == "" and [line for line in seen.err.splitlines() if line.strip()] == [
        "error: these judgments are of 2 methods (rouge, tow): a leaderboard ranks, pairs and tests one method's "
        "scores (their scales differ); give each method its own"]
    alone = CliRunner().invoke(app, ["leaderboard", str(rouge_file), "--no-progress", "--format", "json"])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.output)["methods"] == ["rouge"]


def test_paper_columns_never_next_to_another_scale() -> None:
    bleu = [j.model_copy(update={"method": "bleu", "score": 30.0, "judge_model": None}) for j in hand_made()]
    lb = build_leaderboard(bleu, LeaderboardOptions(n_boot=0, paper=paper_table4()))
    assert lb.paper is None and lb.shown == tuple(("ours", c) for c in lb.columns)
    md = board_text(lb, "markdown")
    assert "(paper," not in md
    assert "metric bleu" in headlines(lb)[0]


def test_one_pair_has_one_interval_wherever_it_is_printed() -> None:
    """The adjacent table, --compare (both orders), --baseline and the closing line once resampled one pair four
    ways (a generator per printout): four intervals for one difference."""
    rng = np.random.default_rng(4)
    rows = [Judgment(method="tow", item_id=f"g{k}", model=m, task="guide", genre="letters",
                     score=float(np.clip(base + rng.normal(), 1, 10))) for k in range(40)
            for m, base in (("alpha", 6.0), ("beta", 5.5), ("gamma", 3.0))]
    lb = build_leaderboard(rows, LeaderboardOptions(seed=2, n_boot=300, compare=("beta", "alpha"), baseline="beta"))
    adjacent = next(p for p in lb.paired if (p.first, p.second) == ("alpha", "beta"))
    asked = next(p for p in lb.comparisons if (p.first, p.second) == ("beta", "alpha"))
    versus = lb.versus["alpha"]
    assert (versus.first, versus.second) == ("alpha", "beta")
    assert (versus.ci_low, versus.ci_high) == (adjacent.ci_low, adjacent.ci_high)
    assert (asked.mean_diff, asked.ci_low, asked.ci_high) == (
        -adjacent.mean_diff, -adjacent.ci_high, -adjacent.ci_low)  # type: ignore[operator]
    assert asked.p_wilcoxon == adjacent.p_wilcoxon


def test_ordered_by_all_places_the_paper_columns_among_ours() -> None:
    """alpha 6.50 ranks above DS-R1's published 6.10; beta 4.50 below Llama's 4.59: the order line is true."""
    lb = build_leaderboard(hand_made(), LeaderboardOptions(n_boot=0, paper=paper_table4()))
    paper = paper_table4().models
    assert lb.shown == (("ours", "alpha"), *(("paper", m) for m in paper), ("ours", "beta"))
    header = next(line for line in board_text(lb, "markdown").splitlines() if line.startswith("|  | alpha |"))
    assert header.endswith("| Llama-3.3-70B-Instruct (paper, gpt-4o judge, not comparable) | beta |")
    assert "Models ordered by: All mean over each model's own scored items; the paper's reference columns among " \
        "them by their published All." in board_text(lb, "markdown")
    ranks = {(r["column"], r["rank"]) for r in to_json_data(lb)["cells"] if r["row"] == "all"}
    assert ("alpha", 1) in ranks and ("beta", 12) in ranks
    assert ("deepseek-r1 (paper, gpt-4o judge, not comparable)", 2) in ranks
    # the closing line ranks among comparable rows only: the paper's columns are not (another judge, a subset)
    assert "rank 2 of 2 (the paper's 10 not comparable)" in headlines(lb)[1]
    shared = build_leaderboard(_against_order(), LeaderboardOptions(n_boot=0, paper=paper_table4(), order="shared"))
    assert shared.shown[:2] == (("ours", "delta"), ("ours", "gamma"))  # another order: the paper's after ours


def test_compare_and_baseline_pair_on_shared_items(tmp_path: Path) -> None:
    lb = build_leaderboard(_against_order(), LeaderboardOptions(seed=1, n_boot=100, compare=("delta", "gamma")))
    (pair,) = lb.comparisons
    assert (pair.first, pair.second, pair.n_shared, pair.mean_diff, pair.p_wilcoxon) == ("delta", "gamma", 2, 1.0,
                                                                                         0.5)
    assert "| delta − gamma | 2 | +1.00 [+1.00, +1.00] | 0.5 |" in board_text(lb, "markdown")
    three = [*_against_order(), _j("eps", "c1", 2.0), _j("eps", "g1", 3.0)]
    base = build_leaderboard(three, LeaderboardOptions(seed=1, n_boot=100, baseline="eps"))
    assert [(p.first, p.second, p.mean_diff) for p in base.comparisons] == [("gamma", "eps", 3.5), ("delta", "eps",
                                                                                                    4.5)]
    assert "vs eps: +3.50 [+3.00, +4.00] on 2 shared" in headlines(base)[0]
    assert "### Paired on shared items: every model against eps" in board_text(base, "markdown")
    with pytest.raises(ConfigError, match=r"--baseline: unknown model 'gama' \(did you mean 'gamma'\?\)"):
        build_leaderboard(three, LeaderboardOptions(n_boot=0, baseline="gama"))
    path = tmp_path / "r.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in three), encoding="utf-8")
    out = CliRunner().invoke(app, ["leaderboard", str(path), "--compare", "delta", "gamma", "--baseline", "eps",
                                   "--format", "json", "--bootstrap", "100", "--seed", "1"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [(c["first"], c["second"], c["mean_diff"]) for c in data["comparisons"]] == [
        ("delta", "gamma", 1.0), ("gamma", "eps", 3.5), ("delta", "eps", 4.5)]
    shown = CliRunner().invoke(app, ["leaderboard", str(path), "--baseline", "eps"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    expected = headlines(build_leaderboard(three, LeaderboardOptions(baseline="eps")))
    assert shown.output.rstrip("\n").splitlines()[-3:] == expected
