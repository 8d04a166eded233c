"""Terminal tables fit the terminal (report.fit): as laid out when that fits, else turned (a leaderboard's models as
rows), else wrapped between words, else the fewest parts; nothing dropped, no name or number broken, and mixed
methods named in every column."""

from __future__ import annotations

import io
import re
from collections import Counter

from rich.console import Console

from howtobench.data.genres import TABLE4_GENRES
from howtobench.data.paper import paper_table4
from howtobench.judges.base import Judgment
from howtobench.report.fit import Grid, arrange, share, wrap
from howtobench.report.formats.table import document_view
from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
from howtobench.report.render import board_document
from howtobench.report.tables import Table, label_columns, numeric_column, print_tables
from table_text import NUMBER

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


def test_wrap_keeps_an_interval_whole_under_its_mean_and_breaks_it_only_when_it_must() -> None:
    assert wrap("0.18 [0.16, 0.19]", 17) == "0.18 [0.16, 0.19]"
    assert wrap("0.18 [0.16, 0.19]", 12) == "0.18\n[0.16, 0.19]"
    assert wrap("0.18 [0.16, 0.19]", 11) == "0.18\n[0.16,\n0.19]"  # never "0.18 [0.16," over "0.19]"
    assert wrap("claude-3-5-sonnet-20241022 (paper, gpt-4o judge)", 26) == \
        "claude-3-5-sonnet-20241022\n(paper, gpt-4o judge)"
    assert wrap("claude-3-5-sonnet-20241022", 10) == "claude-3-5-sonnet-20241022"  # a name is never cut here
    assert wrap("a\n\nb c", 1) == "a\n\nb\nc"


def test_share_caps_the_widest_columns_first() -> None:
    # a 13-wide header keeps its line; the 60-wide description gives way (down to its widest word, 9)
    assert share([5, 9], [13, 60], 50) == [13, 37]
    assert share([6, 6, 6], [17, 17, 17], 30) == [10, 10, 10]
    assert share([6, 6], [17, 8], 100) == [17, 8]


def test_a_grid_that_fits_nowhere_is_split_into_the_fewest_even_parts_that_repeat_the_labels() -> None:
    grid = Grid("T", ["", *(f"col{k}" for k in range(7))], [["row", *("1.00 [0.50, 1.50]" for _ in range(7))]])
    # the label column (3) and three columns of whole words (6 each) fit 40 with their rules: greedy packing
    # would give 3 + 3 + 1 columns, the same three parts evened out give 3 + 2 + 2
    parts = arrange([grid], 40)
    assert [part.header for part, _ in parts] == [["", "col0", "col1", "col2"], ["", "col3", "col4"],
                                                  ["", "col5", "col6"]]
    assert [part.title for part, _ in parts] == ["T, part 1 of 3 (col0 … col2)", "part 2 of 3 (col3 … col4)",
                                                 "part 3 of 3 (col5 … col6)"]
    assert [part.body[0][0] for part, _ in parts] == ["row"] * 3


def test_eighty_columns_turn_models_into_rows_and_keep_every_model_row_and_number() -> None:
    board = build_leaderboard(judgments(), LeaderboardOptions(n_boot=50, paper=paper_table4(), title="T"))
    text = printed(document_view(board_document(board)), 80)
    grids = text[:text.index("Models ordered by")]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "models as rows" in text
    parts = len(re.findall(r"part \d of (\d)", grids))
    for model in MODELS:  # ours, whole on its line, and the paper's reference line of each of the ten, in every part
        assert len(re.findall(rf"│ {re.escape(model)}\s+│", grids)) == 2 * parts, model
    # twelve items judged by an unrecorded judge: the paper's columns stand there, labelled
    assert grids.count("(paper, gpt-4o judge,") == 10 * parts  # the label wraps: "not comparable" on its next line
    assert "Reference columns not comparable with the paper's Table 4: 12 items, a subset of its 1,302; judged by " \
        "an unrecorded judge, not GPT-4o." in " ".join(text.split())
    for label in ("Completion", "Guide", "Open", "Argumentative", "Regulation", "All"):
        assert re.search(rf"┃\s+{label} ┃", grids), label
    means = Counter(f"{c.mean:.2f}" for c in board.cells.values())
    bounds = Counter(f"{v:.2f}" for c in board.cells.values() for v in (c.ci_low, c.ci_high) if v is not None)
    reference = Counter(f"{v:.2f}" for row in board.rows for m in MODELS if (v := board.paper.get(row.key, m)))  # type: ignore[union-attr]
    assert Counter(NUMBER.findall(grids)) == means + bounds + reference  # every value once, none cut


def test_wide_terminal_keeps_columns_and_whole_names() -> None:
    board = build_leaderboard(judgments(), LeaderboardOptions(n_boot=50, title="T"))
    text = printed(document_view(board_document(board)), 400)
    assert "models as rows" not in text
    header = next(line for line in text.splitlines() if "claude-3-5-sonnet-20241022" in line)
    assert all(model in header for model in MODELS)


def test_counts_table_keeps_models_as_rows_and_words_whole_at_eighty_columns() -> None:
    """The "Judged writings per model" table used to fold headers and names mid-word at 80 columns
    ("trunca" / "ted", "gpt-4o" / "-2024-" / "11-20")."""
    board = build_leaderboard(judgments(), LeaderboardOptions(n_boot=20, title="T"))
    text = printed(document_view(board_document(board)), 80)
    counts = text[text.index("Judged writings per model"):text.index("Adjacent models")]
    assert max(len(line) for line in counts.splitlines()) <= 80
    for header in ("judged", "scored", "failed", "empty", "truncated", "renorm.", "repaired"):
        assert re.search(rf"[┃ ]{re.escape(header)}[ ┃]", counts), header
    parts = max(1, len(re.findall(r"part \d of \d", counts)))
    for model in MODELS:  # whole, once per part, as a row
        assert len(re.findall(rf"│ {re.escape(model)}\s+│", counts)) == parts


def test_a_generic_table_too_wide_for_the_terminal_is_turned_when_that_fits() -> None:
    """Table 3 (`meta correlate`) at 80 columns used to print one letter per line, then parts of a few columns;
    now its two methods become columns; and a note's "[n/a]" stays (never read as rich markup)."""
    table = Table(title="Correlation [system]", columns=["Method", "Cost ($)", *(f"Task{k} ρ" for k in range(12))],
                  notes=["[n/a]: the interval is undefined there"])
    table.add_row("tow", 1.5, *(f"0.{k}1 [-0.99, -0.86]" for k in range(12)))
    table.add_row("rubric", 0.25, *(f"0.{k}2 [n/a]" for k in range(12)))
    console = Console(file=io.StringIO(), width=80, record=True)
    print_tables([table], "table", console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Correlation [system] — turned to fit the terminal" in text and "part" not in text
    assert re.search(r"┃ Method\s+┃\s+tow ┃\s+rubric ┃", text)
    for k in range(12):
        assert re.search(rf"│ Task{k} ρ\s+│\s+0\.{k}1 \[-0\.99, -0\.86\] │\s+0\.{k}2 \[n/a\] │", text), k
    assert re.search(r"│ Cost \(\$\)\s+│\s+1\.50 │\s+0\.25 │", text)
    assert text.count("the interval is undefined there") == 1 and "[n/a]: the interval" in text


def test_a_text_table_wraps_as_laid_out_rather_than_turning() -> None:
    """`list methods`: long descriptions wrap in their column; a turned table of eight descriptions would not fit."""
    table = Table("Judge methods", ["method", "calls a model", "what it is"])
    for k in range(8):
        table.add_row(f"method{k}", "yes", " ".join(f"word{k}{j}" for j in range(20)))
    text = printed_tables(table, 80)
    assert "turned" not in text and "part" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert re.search(r"┃ method\s+┃ calls a model ┃ what it is\s+┃", text)  # a short header keeps its line
    for k in range(8):
        assert all(f"word{k}{j}" in text for j in range(20))


def printed_tables(table: Table, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    print_tables([table], "table", console)
    return console.export_text()


def test_run_ids_are_row_labels_and_numbers_formatted_as_text_are_not() -> None:
    """`llm usage` names rows by run id and purpose (a run id starts with digits); robustness formats its initial
    scores itself ("6.12"): labels are what stays in every part, so both must be told apart."""
    usage = Table("Model calls", ["run", "purpose", "calls", "cost USD"])
    usage.add_row("20260101T100000Z-ab12cd", "judge:tow", 12, "0.50")
    assert label_columns(usage) == 2
    robustness = Table("Robustness", ["method", "init", "n", "drop"])
    robustness.add_row("tow", "6.12", 50, "-0.12 [-0.20, -0.05]▲*")
    assert label_columns(robustness) == 1
    assert numeric_column(["-0.12 [-0.20, -0.05]▲*", "-", "1.2e-05", "12.5%", "0.18\n[0.16,\n0.19]"])
    assert not numeric_column(["20260101T100000Z-ab12cd"]) and not numeric_column(["-", "—"])
