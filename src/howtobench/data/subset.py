"""`--subset N --seed S`: a small sample of the benchmark that still looks like the benchmark.

`--limit N` keeps the first N items of each task in file order, which covers only the genres that happen to
come first (3 of 12 with `--limit 20`). A subset is drawn over the (task, genre) cells instead:

1. coverage — one item of every genre (in a seeded order), each from the cell whose task has been drawn
   least so far, so the three tasks stay balanced; 12 draws cover all 12 Table 4 genres;
2. proportion — every further draw goes to the cell furthest below its share of the benchmark
   (cell size x N / total), so a larger subset converges on the benchmark's own mix.

Within a cell the items come in a seeded shuffle. Same items, N and seed: the same subset, returned in
file order. N at least the number of items returns them all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from howtobench.data.models import Item

Cell = tuple[str, str]


def _cells(items: Sequence[Item], rng: np.random.Generator) -> dict[Cell, list[Item]]:
    cells: dict[Cell, list[Item]] = {}
    for item in items:
        cells.setdefault((item.task, item.genre), []).append(item)
    return {cell: [members[k] for k in rng.permutation(len(members))] for cell, members in sorted(cells.items())}


def _coverage(
    cells: dict[Cell, list[Item]], n: int, tie: dict[Cell, float], rng: np.random.Generator
) -> dict[Cell, int]:
    """One draw per genre, each from the cell of the least-drawn task (ties: the larger cell, then the seed)."""
    taken = dict.fromkeys(cells, 0)
    per_task: dict[str, int] = {}
    genres = sorted({genre for _, genre in cells})
    for k in rng.permutation(len(genres))[:n]:
        options = [cell for cell in cells if cell[1] == genres[k]]
        cell = min(options, key=lambda c: (per_task.get(c[0], 0), -len(cells[c]), tie[c]))
        taken[cell] += 1
        per_task[cell[0]] = per_task.get(cell[0], 0) + 1
    return taken


def stratified_subset(items: Sequence[Item], n: int, seed: int = 0) -> list[Item]:
    """`n` items stratified by task x genre (see the module docstring), in the order of `items`."""
    if n < 1:
        raise ValueError("a subset needs at least one item")
    if n >= len(items):
        return list(items)
    rng = np.random.default_rng(seed)
    cells = _cells(items, rng)
    tie = {cell: float(x) for cell, x in zip(cells, rng.random(len(cells)), strict=True)}
    taken = _coverage(cells, n, tie, rng)
    total = len(items)
    for _ in range(n - sum(taken.values())):
        open_cells = [c for c in cells if taken[c] < len(cells[c])]
        cell = max(open_cells, key=lambda c: (len(cells[c]) * n / total - taken[c], -tie[c]))
        taken[cell] += 1
    chosen = {id(item) for cell, members in cells.items() for item in members[: taken[cell]]}
    return [item for item in items if id(item) in chosen]
