"""Reading printed terminal tables back in tests: the numbers they show and the labels of their rows."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+\.\d\d(?:\d\d)?(?![\w.])")
"""A number printed to two decimals (four for a 0-1 metric), standing alone (not the "2.0" of gemini-2.0-flash or the
"3.3" of Llama-3.3)."""


def label_cells(text: str) -> list[str]:
    """The first column of every row of the printed tables: in a table whose rows are ruled apart (wrapped cells) the
    lines between two rules joined by spaces, in a table of one-line rows each line."""
    cells: list[str] = []
    lines: list[str] = []
    ruled = False
    for line in [*text.splitlines(), ""]:
        if line.startswith("│"):
            lines.append(line.split("│")[1].strip())
            continue
        if line.startswith("┏"):
            ruled = False
        if line.startswith("├"):
            ruled = True
        if lines and (line.startswith("├") or ruled):
            cells.append(" ".join(part for part in lines if part))
        elif lines:
            cells += [part for part in lines if part]
        lines = []
    return cells
