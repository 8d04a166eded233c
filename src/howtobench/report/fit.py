"""Terminal tables that fit the terminal, by one rule for every table the toolkit prints.

rich, given a table wider than the terminal, narrows columns until words break mid-name and columns vanish (at 80
columns a leaderboard lost three models without a word). Here the layout is chosen at print time, for the width
the table is printed at:

1. as laid out, when every cell fits on one line;
2. turned, when that fits on one line per cell: a leaderboard's models become rows (`Fitted.turned_label`
   "models as rows"), any other table's rows become its columns;
3. as laid out, else turned, with cell text wrapped between words and never inside one, so no name or number is
   cut: an interval stays whole under its mean ("0.18" over "[0.16, 0.19]") while the column has room for it, and
   only when it has not is it wrapped at its space;
4. when no layout fits even with whole words (sixteen columns of intervals do not fit 80 columns: their words
   alone are wider), the fewest consecutive groups of columns that do, of the layout needing fewer groups
   (turned on a tie), each repeating the row labels and titled "part k of n (first … last column)".

Every cell of the table is printed in every case; notes go under the last part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

UNIT = re.compile(r"[\[(][^\])]*[\])]\S*|\S+")
"""What wrapping keeps together while it can: a bracketed group ("[0.16, 0.19]", "(paper, gpt-4o judge)") or a
word."""

TableMaker = Callable[[str, list[str], list[list[str]], bool], Table]
"""Builds the rich table of a grid: (title, header, body, whether it is the last part: notes go under it). Cell
text arrives wrapped (with newlines) where the layout needs it; `Fitted` sets the column widths."""


@dataclass(frozen=True)
class Grid:
    """A titled table of display text; its first `labels` columns name the rows (repeated in every part)."""

    title: str
    header: list[str]
    body: list[list[str]]
    labels: int = 1

    def turned(self, corner: str, label: str) -> Grid:
        """Rows as columns: the first column lists the old column headers under `corner`; each old row becomes a
        column headed by its labels. `label` is added to the title so the reader knows the table was turned."""
        heads = [" / ".join(row[:self.labels]) for row in self.body]
        lines = [[self.header[k], *(row[k] for row in self.body)] for k in range(self.labels, len(self.header))]
        return Grid(f"{self.title} — {label}", [corner, *heads], lines)

    def only(self, columns: Sequence[int]) -> Grid:
        """The label columns and `columns` (indexes into the header), same title."""
        keep = [*range(self.labels), *columns]
        return replace(self, header=[self.header[k] for k in keep], body=[[row[k] for k in keep] for row in self.body])


def _pieces(text: str, split: Callable[[str], list[str]]) -> Iterator[str]:
    for line in text.split("\n"):
        yield from split(line)


def _span(column: Iterable[str], split: Callable[[str], list[str]]) -> int:
    return max((cell_len(piece) for text in column for piece in _pieces(text, split)), default=0)


def _columns(grid: Grid) -> list[list[str]]:
    return [[head, *(row[k] for row in grid.body)] for k, head in enumerate(grid.header)]


def spans(grid: Grid) -> tuple[list[int], list[int], list[int]]:
    """Per column: its width on one line, its widest bracketed group or word, its widest word (the narrowest it
    can be with whole words)."""
    columns = _columns(grid)
    return ([_span(c, lambda line: [line]) for c in columns], [_span(c, UNIT.findall) for c in columns],
            [_span(c, str.split) for c in columns])


def frame(n_columns: int) -> int:
    """What rich's default box adds to the content width: a border and one space each side of every cell."""
    return 3 * n_columns + 1


def share(low: list[int], high: list[int], room: int) -> list[int]:
    """Widths between `low` and `high` filling `room` (at least sum(low)): every column is capped at one common
    width, never below its `low`, the cap as high as the room allows — the widest columns give way first, so a
    short header or a number keeps its line while a long description wraps."""
    def capped(cap: int) -> list[int]:
        return [min(h, max(lo, cap)) for lo, h in zip(low, high, strict=True)]

    lowest, highest = 0, max(high, default=0)
    while lowest < highest:  # the largest cap that fits
        middle = (lowest + highest + 1) // 2
        lowest, highest = (middle, highest) if sum(capped(middle)) <= room else (lowest, middle - 1)
    widths = capped(lowest)
    spare = room - sum(widths)
    for k in sorted(range(len(widths)), key=lambda k: widths[k] - high[k]):  # the columns furthest from whole
        if spare and widths[k] < high[k]:
            widths[k], spare = widths[k] + 1, spare - 1
    return widths


def widths_for(grid: Grid, width: int) -> list[int] | None:
    """Column widths that fit `width` with whole words, wrapping as little as possible; None when none do.

    One line per cell when that fits; else every column at least as wide as its widest bracketed group, so an
    interval wraps whole under its mean; else at least its widest word."""
    room = width - frame(len(grid.header))
    natural, units, words = spans(grid)
    if sum(natural) <= room:
        return natural
    for low, high in ((units, natural), (words, units)):
        if sum(low) <= room:
            return share(low, high, room)
    return None


def _fill(pieces: Iterable[str], width: int) -> list[str]:
    """Greedy lines of at most `width` cells from `pieces` joined by spaces (a piece wider stays whole)."""
    lines: list[str] = []
    for piece in pieces:
        if lines and cell_len(f"{lines[-1]} {piece}") <= width:
            lines[-1] = f"{lines[-1]} {piece}"
        else:
            lines.append(piece)
    return lines


def wrap(text: str, width: int) -> str:
    """`text` in lines of at most `width` cells, broken between bracketed groups and words. A group wider than
    `width` starts a line of its own and is broken at its spaces ("0.18" / "[0.16," / "0.19]", never
    "0.18 [0.16," / "0.19]"); a word wider than `width` is left whole (rich folds it: the last resort)."""
    lines: list[str] = []
    for line in text.split("\n"):
        whole: list[str] = []
        for unit in UNIT.findall(line) or [line]:
            if cell_len(unit) <= width:
                whole.append(unit)
                continue
            lines += _fill(whole, width) + _fill(unit.split(), width)
            whole = []
        lines += _fill(whole, width)
    return "\n".join(lines)


def column_chunks(fits: Callable[[list[int]], bool], columns: Iterable[int]) -> list[list[int]]:
    """Consecutive groups of `columns`, each as long as `fits` allows (at least one column)."""
    chunks: list[list[int]] = []
    for k in columns:
        if chunks and fits([*chunks[-1], k]):
            chunks[-1].append(k)
        else:
            chunks.append([k])
    return chunks


def balanced(chunks: list[list[int]], fits: Callable[[list[int]], bool]) -> list[list[int]]:
    """The same number of groups with sizes as even as possible (greedy packing can leave a last group of one
    column), when each of them fits; else the greedy groups."""
    flat = [k for chunk in chunks for k in chunk]
    n, count = len(flat), len(chunks)
    sizes = [n // count + (1 if k < n % count else 0) for k in range(count)]
    starts = [sum(sizes[:k]) for k in range(count)]
    even = [flat[start:start + size] for start, size in zip(starts, sizes, strict=True)]
    return even if all(fits(group) for group in even) else chunks


Part = tuple[Grid, list[int] | None]
"""A table to print and its column widths (None: too narrow even for one column with whole words; rich folds)."""


def bands(grid: Grid, width: int) -> list[Part]:
    """The fewest consecutive groups of columns that each fit `width` with whole words, labels repeated."""
    def fits(columns: list[int]) -> bool:
        return widths_for(grid.only(columns), width) is not None

    chunks = column_chunks(fits, range(grid.labels, len(grid.header)))
    if not chunks:  # nothing but row labels, and they alone are too wide: rich folds them
        return [(grid, None)]
    groups = balanced(chunks, fits)
    parts: list[Part] = []
    for k, group in enumerate(groups, start=1):
        span = grid.header[group[0]] if len(group) == 1 else f"{grid.header[group[0]]} … {grid.header[group[-1]]}"
        title = f"{grid.title}, part {k} of {len(groups)} ({span})" if k == 1 else f"part {k} of {len(groups)} ({span})"
        part = replace(grid.only(group), title=title)
        parts.append((part, widths_for(part, width)))
    return parts


def arrange(layouts: Sequence[Grid], width: int) -> list[Part]:
    """The module docstring's rule over `layouts` (as laid out first, then turned)."""
    for grid in layouts:
        natural = spans(grid)[0]
        if sum(natural) + frame(len(natural)) <= width:
            return [(grid, natural)]
    for grid in layouts:
        if (widths := widths_for(grid, width)) is not None:
            return [(grid, widths)]
    return min((bands(grid, width) for grid in reversed(layouts)), key=len)


@dataclass
class Fitted:
    """A grid printed to fit the width it is printed at (see the module docstring); `turned_label` None keeps it
    as laid out (a table whose rows already are the models)."""

    grid: Grid
    make: TableMaker
    turned_label: str | None = None
    corner: str = ""

    def layouts(self) -> list[Grid]:
        if self.turned_label is None or len(self.grid.header) <= self.grid.labels + 1:
            return [self.grid]
        corner = self.corner or " / ".join(self.grid.header[:self.grid.labels])
        return [self.grid, self.grid.turned(corner, self.turned_label)]

    def parts(self, width: int) -> list[Table]:
        """The rich tables to print at `width`, widths set and cell text wrapped."""
        chosen = arrange(self.layouts(), width)
        return [self._table(grid, widths, last=k == len(chosen) - 1) for k, (grid, widths) in enumerate(chosen)]

    def _table(self, grid: Grid, widths: list[int] | None, last: bool) -> Table:
        if widths is None:
            return self.make(grid.title, grid.header, grid.body, last)
        header = [wrap(text, w) for text, w in zip(grid.header, widths, strict=True)]
        body = [[wrap(text, w) for text, w in zip(row, widths, strict=True)] for row in grid.body]
        table = self.make(grid.title, header, body, last)
        for column, w in zip(table.columns, widths, strict=True):
            column.width = w
        table.show_lines = any("\n" in text for row in body for text in row)  # a rule between rows of several lines
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.parts(options.max_width)
