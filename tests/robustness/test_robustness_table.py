"""The robustness table on constructed judgments: deltas, node rows, missing counts and flags are exact."""

from __future__ import annotations

import pytest

from howtobench.judges.base import Judgment
from howtobench.report.tables import render
from howtobench.robustness.table import ORIGINAL, as_table, robustness_table


def j(method: str, item: str, model: str, score: float | None, nodes: dict[str, float | None] | None = None,
      status: str = "ok") -> Judgment:
    return Judgment(method=method, item_id=item, model=model, task="open", genre="fiction", score=score,
                    nodes=nodes or {}, status=status)  # type: ignore[arg-type]


def tow_sets() -> dict[str, list[Judgment]]:
    return {
        ORIGINAL: [j("tow", "i1", "m", 5.0, {"content": 6.0}), j("tow", "i2", "m", 6.0, {"content": 5.0}),
                   j("tow", "i3", "m", None, status="failed")],
        "drop": [j("tow", "i1", "m+drop", 4.0, {"content": 5.0}), j("tow", "i2", "m+drop", 5.0, {"content": 5.0}),
                 j("tow", "i3", "m+drop", 3.0, {"content": 3.0})],
        "inject-end": [j("tow", "i1", "m+inject-end", 6.0, {"content": 6.5}),
                       j("tow", "i2", "m+inject-end", 7.0, {"content": 6.0})],
        "reference": [j("tow", "i1", "m+reference", 6.0), j("tow", "i2", "m+reference", 6.0)],
    }


def test_deltas_missing_and_flags_are_exact() -> None:
    kinds = ["drop", "inject-end", "reference"]
    table = robustness_table({"tow": tow_sets()}, kinds, seed=0, n_boot=200)
    overall, content = table.rows
    assert (overall.label, overall.initial, overall.n_initial) == ("tow", 5.5, 2)
    drop = overall.cells["drop"]
    assert (drop.n, drop.missing, drop.mean_delta, drop.flag) == (2, 1, -1.0, "")
    assert drop.ci == (-1.0, -1.0)
    inject = overall.cells["inject-end"]
    assert (inject.mean_delta, inject.flag) == (1.0, "▲*")
    ref = overall.cells["reference"]
    assert (ref.mean_score, ref.mean_delta, ref.flag) == (6.0, 0.5, "")
    # node row: content 6,5 -> drop 5,5 (mean -0.5), inject 6.5,6 (+0.75)
    assert (content.label, content.initial) == ("tow:content", 5.5)
    assert content.cells["drop"].mean_delta == pytest.approx(-0.5)
    assert content.cells["inject-end"].mean_delta == pytest.approx(0.75)
    assert content.cells["inject-end"].flag in ("▲", "▲*")
    assert content.cells["reference"].n == 0  # the reference judgments carry no node scores


def test_rise_with_interval_crossing_zero_is_flagged_without_star() -> None:
    sets = {ORIGINAL: [j("bleu", f"i{k}", "m", 10.0) for k in range(4)],
            "repeat": [j("bleu", "i0", "m+repeat", 14.0), j("bleu", "i1", "m+repeat", 8.0),
                       j("bleu", "i2", "m+repeat", 12.0), j("bleu", "i3", "m+repeat", 9.0)]}
    cell = robustness_table({"bleu": sets}, ["repeat"], n_boot=500).rows[0].cells["repeat"]
    assert cell.mean_delta == pytest.approx(0.75)
    assert cell.ci is not None and cell.ci[0] < 0 < cell.ci[1]
    assert cell.flag == "▲"


def test_reference_far_from_anchor_is_flagged_and_unanchored_rows_are_not() -> None:
    sets = {ORIGINAL: [j("tow", "i1", "m", 5.0), j("tow", "i2", "m", 5.0)],
            "reference": [j("tow", "i1", "m+reference", 9.0), j("tow", "i2", "m+reference", 9.0)]}
    ref = robustness_table({"tow": sets}, ["reference"]).rows[0].cells["reference"]
    assert (ref.mean_score, ref.flag) == (9.0, "≠")
    other = {"single": {ORIGINAL: sets[ORIGINAL], "reference": sets["reference"]}}
    assert robustness_table(other, ["reference"]).rows[0].cells["reference"].flag == ""


def test_same_seed_same_intervals_and_rendering() -> None:
    first = robustness_table({"tow": tow_sets()}, ["drop", "inject-end"], seed=3)
    assert robustness_table({"tow": tow_sets()}, ["drop", "inject-end"], seed=3) == first
    text = render(as_table(first), "markdown")
    assert "| tow | 5.50 | 2 | -1.00 [-1.00, -1.00] | +1.00 [+1.00, +1.00]▲* |" in text


def test_blind_judge_and_unchanged_writings() -> None:
    sets = {ORIGINAL: [j("bleu", "i1", "m", 40.0), j("bleu", "i2", "m", 50.0)],
            "shuffle": [j("bleu", "i1", "m+shuffle", 40.0), j("bleu", "i2", "m+shuffle", 50.0)],
            "drop": [j("bleu", "i1", "m+drop", 40.0), j("bleu", "i2", "m+drop", 44.0)]}
    table = robustness_table({"bleu": sets}, ["shuffle", "drop"], unchanged={("i1", "m+drop")})
    shuffle, drop = table.rows[0].cells["shuffle"], table.rows[0].cells["drop"]
    assert (shuffle.mean_delta, shuffle.flag) == (0.0, "○")
    assert (drop.n, drop.unchanged, drop.mean_delta, drop.flag) == (1, 1, -6.0, "")
    assert "did not change the text: drop 1." in "\n".join(as_table(table).notes)


def test_zero_to_one_scales_get_more_digits() -> None:
    sets = {ORIGINAL: [j("rouge", "i1", "m", 0.1234)], "drop": [j("rouge", "i1", "m+drop", 0.1200)]}
    text = render(as_table(robustness_table({"rouge": sets}, ["drop"], n_boot=10)), "markdown")
    assert "| rouge | 0.1234 | 1 | -0.0034 [-0.0034, -0.0034] |" in text


@pytest.mark.parametrize("empty", ["exclude", "lowest"])
def test_empty_writings_are_left_out_by_default_and_counted(empty: str) -> None:
    """Originals i1 5, i2 6, i3 empty (lowest 1); drop left i1 empty (lowest 1), i2 5, i3 4. Left out: init over
    i1, i2 and drop over i2 only (−1). Lowest: init (5 + 6 + 1) / 3 = 4 and drop (−4 − 1 + 3) / 3 = −2/3."""
    sets = {ORIGINAL: [j("tow", "i1", "m", 5.0), j("tow", "i2", "m", 6.0), j("tow", "i3", "m", 1.0, status="empty")],
            "drop": [j("tow", "i1", "m+drop", 1.0, status="empty"), j("tow", "i2", "m+drop", 5.0),
                     j("tow", "i3", "m+drop", 4.0)]}
    table = robustness_table({"tow": sets}, ["drop"], seed=0, n_boot=50, empty=empty)  # type: ignore[arg-type]
    (row,) = table.rows
    drop = row.cells["drop"]
    if empty == "exclude":
        assert (row.initial, row.n_initial, drop.n, drop.mean_delta) == (5.5, 2, 1, -1.0)
    else:
        assert (row.initial, row.n_initial, drop.n) == (4.0, 3, 3)
        assert drop.mean_delta == pytest.approx(-2 / 3)
    assert (row.n_empty, drop.empty, drop.missing) == (1, 2, 0)
    shown = as_table(table)
    treatment = "left out" if empty == "exclude" else "scored lowest"
    assert shown.columns[-1] == f"empty ({treatment})" and shown.rows[0][-1] == 3
    assert f"Empty writings ({treatment}, --empty {empty}" in render(shown, "markdown")
    assert "original 1, drop 2." in render(shown, "markdown")
