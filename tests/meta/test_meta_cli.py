"""`howtobench meta ...` end to end on small files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from meta_helpers import judgment, write_jsonl
from typer.testing import CliRunner

from howtobench.cli.main import app

MODELS = ["a", "b", "c"]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    human = tmp_path / "human.jsonl"
    rows = [
        {"item_id": f"i{i}", "model": m, "rater": r, "score": k + 1 + (0.5 if r == "r2" else 0)}
        for i in range(4)
        for k, m in enumerate(MODELS)
        for r in ("r1", "r2")
    ]
    human.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    results = write_jsonl(
        tmp_path / "tow.jsonl",
        [judgment(f"i{i}", m, 3.0 * k, task="open") for i in range(4) for k, m in enumerate(MODELS)],
    )
    return human, results


def test_correlate_json(tmp_path: Path) -> None:
    human, results = _files(tmp_path)
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(human), "--format", "json",
                                   "--bootstrap", "50"])
    assert out.exit_code == 0, out.output
    system, sample = json.loads(out.output)
    row = system["rows"][0]
    assert row["Method"] == "tow" and row["Open ρ"] == 1.0 and row["All τ"] == 1.0
    assert row["Comp ρ"] is None
    assert (row["interval"], row["items used"], row["Open items"]) == (
        "BCa 95% bootstrap over items, 50×", "common: items rated for every model", 4)
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(human), "--format", "json",
                                   "--bootstrap", "50", "--interval", "percentile", "--items", "available"])
    assert out.exit_code == 0, out.output
    row = json.loads(out.output)[0]["rows"][0]
    assert (row["interval"], row["items used"]) == ("percentile 95% bootstrap over items, 50×",
                                                    "available: each model's own rated items")
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(human), "--interval", "basic"])
    assert out.exit_code != 0 and "interval must be one of bca, percentile" in out.output
    assert sample["title"].startswith("Correlation with human ratings (sample")


def test_agreement_markdown(tmp_path: Path) -> None:
    human, _ = _files(tmp_path)
    out = CliRunner().invoke(app, ["meta", "agreement", str(human), "--format", "markdown"])
    assert out.exit_code == 0, out.output
    assert "| statistic | variant | value | over | n |" in out.output
    assert "| Cohen's κ | unweighted; rater pairs in name order; scores rounded to integers |" in out.output
    assert "| 12 | 12 | 2 | 2 |" in out.output


def test_ablation_cli_markdown(tmp_path: Path) -> None:
    human, _ = _files(tmp_path)
    rows = [
        judgment(f"i{i}", m, 1.0, task="open", nodes={"content": 1.0 + k, "impression": 5.0})
        for i in range(4)
        for k, m in enumerate(MODELS)
    ]
    tow = write_jsonl(tmp_path / "tow.jsonl", rows)
    out = CliRunner().invoke(app, ["meta", "ablation", str(tow), "--human", str(human), "--format", "markdown",
                                   "--level", "system", "--bootstrap", "20"])
    assert out.exit_code == 0, out.output
    title = "**Ablation of ToW nodes (system level; common: items rated for every model; BCa 95% intervals)**"
    assert title in out.output
    assert "| w Content | - | - | - | - | - | - | - | 1.00 [1.00, 1.00]" in out.output
    # the stored roots (1.0) are not what their nodes give: said, not silently mixed into the full-tree row
    assert "warning: 12 stored roots are not the leaf-weighted mean of their node scores" in out.output


def test_inconsistency_cli_weights(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(
        '{"item_id": "A", "sample": 0, "weights": {"a": 0.5, "b": 0.5}}\n'
        '{"item_id": "A", "sample": 1, "weights": {"a": 0.7, "b": 0.3}}\n',
        encoding="utf-8",
    )
    out = CliRunner().invoke(app, ["meta", "inconsistency", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    summary, per_leaf = json.loads(out.output)
    assert abs(summary["rows"][0]["δ (mean)"] - 0.2) < 1e-12
    # leaf a: 0.5, 0.7 -> sample sigma = |0.7 - 0.5| / sqrt(2); the formula is named in the row
    assert abs(summary["rows"][0]["σ (mean)"] - 0.2 / 2**0.5) < 1e-12
    assert summary["rows"][0]["σ formula"] == "sample: sqrt(Σ_t (l_t − μ)² / (n − 1))"
    out = CliRunner().invoke(app, ["meta", "inconsistency", str(path), "--sigma", "literal", "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "0.141,literal: sqrt(Σ_t (l_t − μ)²)," in out.stdout
    assert summary["rows"][0]["instructions"] == 1
    assert [r["leaf"] for r in per_leaf["rows"]] == ["a", "b"]


def test_correlate_errors_and_dimension(tmp_path: Path) -> None:
    human, results = _files(tmp_path)
    other = write_jsonl(tmp_path / "other.jsonl", [judgment("zzz", "a", 1.0)])
    out = CliRunner().invoke(app, ["meta", "correlate", str(other), "--human", str(human)])
    assert out.exit_code != 0 and "no judged writing has a human rating" in str(out.exception)
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(human), "--human-dim", "x"])
    assert out.exit_code != 0 and "dimension 'x'" in str(out.exception)


def test_correlate_without_ci(tmp_path: Path) -> None:
    human, results = _files(tmp_path)
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(human), "--no-ci",
                                   "--format", "csv", "--level", "sample", "--bootstrap", "20"])
    assert out.exit_code == 0, out.output
    header, row = out.stdout.splitlines()[:2]
    assert header.startswith("Method,Cost ($),Comp ρ,Comp τ,Comp σ,Guide ρ") and "low" not in header
    assert row == ("tow,-,-,-,-,-,-,-,1.00,1.00,1.00,1.00,1.00,1.00,0,0,4,4,none,per item: the models rated on it,0,"
                   "exclude: left out")


def test_correlate_and_ablation_empty_flag(tmp_path: Path) -> None:
    """--empty exclude (default) / lowest reach the numbers, and every format counts the empty writings."""
    from test_meta_correlate import _expected, _with_an_empty_writing

    js, human = _with_an_empty_writing()
    results = write_jsonl(tmp_path / "tow.jsonl", js)
    ratings = tmp_path / "human.jsonl"
    ratings.write_text("".join(json.dumps({"item_id": i, "model": m, "rater": "r1", "score": v}) + "\n"
                               for (i, m), v in human.items()), encoding="utf-8")
    for command in ("correlate", "ablation"):
        for flag, keep in ((), False), (("--empty", "lowest"), True):
            out = CliRunner().invoke(app, ["meta", command, str(results), "--human", str(ratings), "--format", "json",
                                           "--bootstrap", "50", *flag])
            assert out.exit_code == 0, out.output
            system, sample = json.loads(out.output)
            row = system["rows"][0]
            assert row["Guide ρ"] == pytest.approx(_expected([0, 1, 2], keep)[0])
            assert sample["rows"][0]["Guide ρ"] == pytest.approx(_expected([0, 1, 2], keep)[1])
            treatment = "lowest: scored lowest" if keep else "exclude: left out"
            assert (row["empty writings"], row["empty"]) == (1, treatment)
        out = CliRunner().invoke(app, ["meta", command, str(results), "--human", str(ratings), "--empty", "zero"])
        assert out.exit_code == 2 and "'zero' is not one of 'exclude', 'lowest'" in out.output
    out = CliRunner().invoke(app, ["meta", "correlate", str(results), "--human", str(ratings), "--format", "markdown",
                                   "--bootstrap", "50"])
    assert "1 empty rated writings left out (--empty exclude, the authors' convention" in out.output
