"""Reading printed terminal tables back in tests: the numbers they show and the labels of their rows."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+\.\d\d(?![\w.])")
"""A number printed to two decimals, standing alone (not the "2.0" of gemini-2.0-flash or the "3.3" of Llama-3.3)."""


def label_cells(text: str) -> list[str]:
    """The first column of every row of tables whose rows are ruled apart (wrapped cells), lines joined by spaces."""
    cells: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("│"):
            lines.append(line.split("│")[1].strip())
        elif lines:
            cells.append(" ".join(part for part in lines if part))
            lines = []
    return cells
