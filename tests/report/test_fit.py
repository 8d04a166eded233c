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
