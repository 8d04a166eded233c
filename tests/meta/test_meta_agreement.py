"""Inter-annotator agreement: every κ / α variant against hand values or an independent computation."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.meta.agreement import KAPPAS, agreement, fleiss_kappa, krippendorff_alpha
from howtobench.meta.human import HumanRating
from howtobench.stats.agreement import cohen_kappa, round_half_up


def _ratings(units: list[list[float]]) -> list[HumanRating]:
    """One writing per unit; rater k gives the unit's k-th score."""
    return [HumanRating(f"i{u}", "m", f"r{k}", float(v)) for u, unit in enumerate(units) for k, v in enumerate(unit)]


def test_kappa_hand_computed() -> None:
    # po = 3/4; marginals a = 1/4 each, b = (1/4, 1/4, 1/2, 0) -> pe = 1/4; kappa = (3/4 - 1/4) / (3/4) = 2/3
    assert cohen_kappa(np.array([1, 2, 3, 4.0]), np.array([1, 2, 3, 3.0])) == pytest.approx(2 / 3)
    assert list(round_half_up(np.array([3.5, 2.49, 4.5]))) == [4.0, 2.0, 5.0]


def test_weighted_kappa_hand_computed() -> None:
    # pairs (1,2), (2,2), (3,3): observed disagreement 1/3 (linear and quadratic alike); marginals a = (1/3)x3,
    # b = (0, 2/3, 1/3); expected linear = 7/9, quadratic = 1; unweighted po = 2/3, pe = 1/3
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 3.0])
    assert cohen_kappa(a, b) == pytest.approx(1 / 2)
    assert cohen_kappa(a, b, power=1) == pytest.approx(1 - (1 / 3) / (7 / 9))
    assert cohen_kappa(a, b, power=2) == pytest.approx(1 - (1 / 3) / 1)


def test_near_misses_on_a_ten_point_scale() -> None:
    """Raters one point apart most of the time: unweighted κ calls it poor, the weighted ones do not."""
    rng = np.random.default_rng(4)
    a = rng.integers(2, 10, 400).astype(float)
    b = a + rng.choice([-1.0, 0.0, 1.0], 400)
    agr = agreement(_ratings([[x, y] for x, y in zip(a, b, strict=True)]), ["cohen", "cohen-linear", "cohen-quadratic"])
    plain, linear, quadratic = (agr.get("Cohen's κ", KAPPAS[k]) for k in ("cohen", "cohen-linear", "cohen-quadratic"))
    assert plain < 0.7 < linear < quadratic
    # quadratic-weighted κ of two raters equals their concordance correlation (Lin) on the integer scores
    lin_ccc = 2 * np.cov(a, b, bias=True)[0, 1] / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert quadratic == pytest.approx(lin_ccc)


def test_fleiss_kappa_textbook_example() -> None:
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories -> kappa = 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    units = [[float(c + 1) for c, n in enumerate(row) for _ in range(n)] for row in table]
    value, n = fleiss_kappa(_ratings(units))
    assert n == 10 and value == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_is_scotts_pi_for_two_raters_and_handles_unequal_counts() -> None:
    pairs = [[1, 2], [3, 3], [2, 2], [4, 5], [5, 5], [1, 1]]
    po = sum(x == y for x, y in pairs) / len(pairs)
    pooled = Counter(v for p in pairs for v in p)
    pe = sum((c / (2 * len(pairs))) ** 2 for c in pooled.values())
    assert fleiss_kappa(_ratings(pairs))[0] == pytest.approx((po - pe) / (1 - pe))  # Scott's pi
    # [1, 1, 2] and [2, 2]: P = (1/3, 1), P_e = (2/5)^2 + (3/5)^2 = 13/25 -> (2/3 - 13/25) / (12/25) = 11/36
    assert fleiss_kappa(_ratings([[1, 1, 2], [2, 2]]))[0] == pytest.approx(11 / 36)


def _ordinal_alpha(units: list[list[float]]) -> float:
    """Krippendorff's ordinal α from its definition: coincidence matrix and rank-based squared distances."""
    values = sorted({v for u in units for v in u})
    pos = {v: k for k, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in units:
        for i, x in enumerate(u):
            for j, y in enumerate(u):
                if i != j:
                    o[pos[x], pos[y]] += 1 / (len(u) - 1)
    n_c = o.sum(axis=1)
    delta = np.zeros_like(o)
    for c in range(len(values)):
        for k in range(len(values)):
            lo, hi = min(c, k), max(c, k)
            delta[c, k] = (n_c[lo:hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2
    n = n_c.sum()
    return float(1 - (n - 1) * (o * delta).sum() / (np.outer(n_c, n_c) * delta).sum())


def test_ordinal_alpha_matches_its_definition() -> None:
    units = [[1, 2], [3, 3], [4, 5], [2, 2, 3], [5, 4], [1, 1], [3, 5]]
    ratings = _ratings([[float(v) for v in u] for u in units])
    assert krippendorff_alpha(ratings, "ordinal") == pytest.approx(_ordinal_alpha(units))
    # interval alpha of (1,2), (3,3), (4,5): Do = 4/6, De = 120/30 = 4 -> 1 - (2/3)/4 = 5/6
    assert krippendorff_alpha(_ratings([[1, 2], [3, 3], [4, 5]])) == pytest.approx(5 / 6)


def test_default_agreement_names_every_variant() -> None:
    ratings = _ratings([[1, 2], [3, 3], [4, 5]])
    agr = agreement(ratings)
    assert (agr.pairs, agr.writings, agr.raters, agr.most_raters) == (3, 3, 2, 2)
    assert [(s.name, s.variant) for s in agr.statistics] == [
        ("Cohen's κ", "unweighted; rater pairs in name order; scores rounded to integers"),
        ("Pearson r", "raw scores; rater pairs in name order"),
        ("Krippendorff's α", "interval"),
    ]
    # rounded labels a=(1,3,4), b=(2,3,5): po = 1/3, pe = 1/9 -> (1/3 - 1/9) / (8/9)
    assert agr.statistics[0].value == pytest.approx((1 / 3 - 1 / 9) / (8 / 9))
    assert agr.statistics[1].value == pytest.approx(np.corrcoef([1, 3, 4], [2, 3, 5])[0, 1])
    with pytest.raises(ValueError, match="unknown agreement variant"):
        agreement(ratings, ["cohen-cubic"])


def test_agreement_cli_variants(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    units = [[1, 2, 2], [3, 3, 4], [4, 5, 5], [2, 2, 1]]
    path.write_text("".join(json.dumps({"item_id": f"i{u}", "model": "m", "rater": f"r{k}", "score": v}) + "\n"
                            for u, unit in enumerate(units) for k, v in enumerate(unit)), encoding="utf-8")
    out = CliRunner().invoke(app, ["meta", "agreement", str(path), "--kappa", "cohen-quadratic", "--kappa", "fleiss",
                                   "--alpha", "ordinal", "--format", "json"])
    assert out.exit_code == 0, out.output
    table, size = json.loads(out.output)
    assert [(r["statistic"], r["variant"].split(";")[0]) for r in table["rows"]] == [
        ("Cohen's κ", "quadratic weights (x − y)²"), ("Fleiss' κ", "all raters of a writing at once"),
        ("Pearson r", "raw scores"), ("Krippendorff's α", "ordinal")]
    assert table["rows"][1]["value"] == pytest.approx(fleiss_kappa(_ratings(units))[0])
    assert "up to 3 raters" in table["notes"][0]
    assert size["rows"][0] == {"rater pairs": 12, "writings": 4, "raters": 3, "most raters on one writing": 3}
    csv_out = CliRunner().invoke(app, ["meta", "agreement", str(path), "--format", "csv"])
    assert "Cohen's κ,unweighted; rater pairs in name order; scores rounded to integers," in csv_out.stdout
    bad = CliRunner().invoke(app, ["meta", "agreement", str(path), "--kappa", "cohen-cubic"])
    assert bad.exit_code != 0 and "unknown agreement variant" in bad.output
