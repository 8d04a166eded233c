"""Terminal leaderboards fit the terminal: models turn into rows when they would not fit; nothing is dropped, no
name is broken, and mixed methods are named in every column."""

from __future__ import annotations

import io
import re

from rich.console import Console

from howtobench.data.genres import TABLE4_GENRES
from howtobench.judges.base import Judgment
from howtobench.report.leaderboard import build_leaderboard
from howtobench.report.paper import paper_table4
from howtobench.report.render import to_rich
from howtobench.report.tables import Table, print_tables

MODELS = list(paper_table4().models)


def judgments(method: str = "tow") -> list[Judgment]:
    out = []
    for k, genre in enumerate(TABLE4_GENRES):
        for m, model in enumerate(MODELS):
            task = ("completion", "guide", "open")[k % 3]
            out.append(Judgment(method=method, item_id=f"i{k}", model=model, task=task, genre=genre,
                                score=4.0 + (m + k) % 5, status="ok"))
    return out


def printed(board: object, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(board)
    return console.export_text()


def test_eighty_columns_turn_models_into_rows_and_keep_every_model_and_row() -> None:
    board = build_leaderboard(judgments(), n_boot=50, paper=paper_table4(), title="T")
    text = printed(to_rich(board), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "models as rows" in text
    for model in MODELS:  # ours and the paper's reference line of each of the ten
        assert re.search(rf"│ {re.escape(model)}\s+│", text), model
        assert f"{model} (paper, gpt-4o judge)" in text
    for label in ("Completion", "Guide", "Open", "Argumentative", "Regulation", "All"):
        assert f"┃ {label}" in text or f" {label} ┃" in text, label
    cell_count = sum(len(re.findall(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", line)) for line in text.splitlines())
    assert cell_count == len(board.cells)  # every one of our cells, with its interval


def test_wide_terminal_keeps_columns_and_whole_names() -> None:
    board = build_leaderboard(judgments(), n_boot=50, title="T")
    text = printed(to_rich(board), 400)
    assert "models as rows" not in text
    header = next(line for line in text.splitlines() if "claude-3-5-sonnet-20241022" in line)
    assert all(model in header for model in MODELS)


def test_mixed_methods_name_the_method_in_every_column() -> None:
    board = build_leaderboard([*judgments("tow"), *judgments("single")], n_boot=20, paper=paper_table4())
    text = printed(to_rich(board), 120)
    for model in MODELS:
        assert f"{model} [tow]" in text and f"{model} [single]" in text
        assert f"{model} [tow] (paper, gpt-4o judge)" in text


def test_counts_table_splits_at_eighty_columns_without_breaking_words() -> None:
    """The "Judged writings per model" table used to fold headers and names mid-word at 80 columns
    ("trunca" / "ted", "gpt-4o" / "-2024-" / "11-20")."""
    board = build_leaderboard(judgments(), n_boot=20, title="T")
    text = printed(to_rich(board), 80)
    counts = text[text.index("Judged writings per model"):text.index("Adjacent models")]
    assert max(len(line) for line in counts.splitlines()) <= 80
    for header in ("judged", "scored", "failed", "empty", "truncated", "renorm.", "repaired"):
        assert re.search(rf"[┃ ]{re.escape(header)}[ ┃]", counts), header
    for model in MODELS:  # whole, once per part of the split table
        assert len(re.findall(rf"│ {re.escape(model)}\s+│", counts)) == counts.count("Judged writings per model")


def test_wide_generic_table_splits_into_parts_that_repeat_the_labels() -> None:
    """Table 3 (`meta correlate`) at 80 columns used to print one letter per line; and a note's "[n/a]" vanished
    (read as rich markup)."""
    table = Table(title="Correlation [system]", columns=["Method", "Cost ($)", *(f"Task{k} ρ" for k in range(12))],
                  notes=["[n/a]: the interval is undefined there"])
    table.add_row("tow", 1.5, *(f"0.{k}1 [-0.99, -0.86]" for k in range(12)))
    table.add_row("rubric", 0.25, *(f"0.{k}2 [n/a]" for k in range(12)))
    console = Console(file=io.StringIO(), width=80, record=True)
    print_tables([table], "table", console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    parts = len(re.findall(r"Correlation \[system\] \(\d+ of \d+\)", text))
    assert parts >= 2 and text.count("│ tow ") == parts and text.count("│ rubric ") == parts
    for k in range(12):
        assert f"Task{k} ρ" in text and f"0.{k}1" in text and f"0.{k}2" in text
    assert text.count("[-0.99,") == 12 and text.count("-0.86]") == 12 and text.count("[n/a]") == 12 + 1
    assert text.count("the interval is undefined there") == 1  # notes once, under the last part
