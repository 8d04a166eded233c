"""The default thresholds on the release's 13,020 writings: `--guard skip` skips at most 0.5 % of them (40, each
rule's count as docs/guard.md gives it), and `howtobench guard` prints those counts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from howtobench.cli import guard as guard_cli
from howtobench.data.loader import load_items, load_release_writings
from howtobench.guard.guard import Guard, GuardSettings

DOCUMENTED = {"empty": 51, "stub": 37, "long": 13, "loop_paragraphs": 2, "loop_sentences": 3, "loop_ngrams": 0,
              "compressible": 0, "wrong_language": 1, "echo": 42, "cliches": 4}


def test_release_counts_match_the_docs_and_skip_under_half_a_percent(bench_root: Path) -> None:
    items = load_items(bench_root)
    by_id = {item.id: item for item in items}
    writings = load_release_writings(bench_root, items=items)
    guard = Guard(GuardSettings(mode="skip"))
    verdicts = [guard.check(by_id[w.item_id], w.output) for w in writings]
    assert len(writings) == 13_020
    assert Counter(name for v in verdicts for name in v.flags) == Counter(DOCUMENTED)
    skipped = sum(v.skip is not None for v in verdicts)
    assert skipped == 40 and skipped / len(writings) <= 0.005
    docs = (Path(__file__).parents[2] / "docs" / "guard.md").read_text(encoding="utf-8")
    assert "**40 of the 13,020 writings (0.31 %)**" in docs


def test_guard_command_on_the_release(bench_root: Path) -> None:
    import typer

    app = typer.Typer()
    guard_cli.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["guard", "--data", str(bench_root), "--format", "json"])
    assert result.exit_code == 0, result.output
    rules, signals, groups = json.loads(result.output)
    assert {row["rule"]: row["flagged"] for row in rules["rows"]} == DOCUMENTED
    assert "13,020 writings; `--guard skip` would skip 40 (0.31 %)" in rules["notes"][0]
    assert len(groups["rows"]) == 30 and sum(row["would skip"] for row in groups["rows"]) == 40
    assert [row["signal"] for row in signals["rows"]][:2] == ["chars", "length_ratio"]
