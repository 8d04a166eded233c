"""Terminal tables that fit the terminal: as laid out when they fit, else turned and split — never cut.

`SplitTable` does the same for any other table (Table 3, call usage, data stats ...): printed as is when its
columns fit without breaking a word, else split into groups of columns, each repeating the row labels (rich would
otherwise fold every header and cell to a letter or two per line at 80 columns).

A leaderboard grid has one column per model. With ten models and 95% intervals it is wider than most
terminals, and rich then shrinks columns until some vanish (at 80 columns three models disappeared without a
word). `FittedGrid` measures the table at the width it is given when printed: if it fits it prints as is;
otherwise the models become rows and the grid's rows (tasks, genres, All) become columns, split into as many
tables as the width needs, each repeating the model column. Every cell is printed somewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table

TableMaker = Callable[[str, list[str], list[list[str]]], Table]


def natural_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    return Measurement.get(console, options.update(width=10_000), table).maximum


def unbroken_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The narrowest the table gets with every word whole (each column as wide as its longest word)."""
    return Measurement.get(console, options.update(width=10_000), table).minimum


def whole_words(console: Console, options: ConsoleOptions, table: Table) -> Table:
    """Fix the column widths of a table wider than the terminal so that no word is broken when it can be helped.

    rich narrows the widest columns first and so cuts words (`[-1.00,` → `[-1.0` / `0,`) even when every word would
    fit; here each column gets its longest word, and the room left is shared out in proportion to what each column
    still needs for unwrapped lines."""
    wide = options.update(width=10_000)
    spans = [[Measurement.get(console, wide, cell) for cell in (column.header, *column.cells)]
             for column in table.columns]
    mins = [max(m.minimum for m in span) for span in spans]
    maxs = [max(m.maximum for m in span) for span in spans]
    room = options.max_width - (natural_width(console, options, table) - sum(maxs))  # borders and padding off
    if sum(maxs) <= room or sum(mins) > room:
        return table
    needs = [high - low for low, high in zip(mins, maxs, strict=True)]
    spare, total_need = room - sum(mins), sum(needs)
    extra = [spare * need // total_need for need in needs]
    by_remainder = sorted(range(len(needs)), key=lambda k: -(spare * needs[k] % total_need))
    for k in by_remainder[:spare - sum(extra)]:
        extra[k] += 1
    for column, low, more in zip(table.columns, mins, extra, strict=True):
        column.width = low + more
    return table


def column_chunks(fits: Callable[[list[int]], bool], columns: Iterable[int]) -> Iterator[list[int]]:
    """Consecutive groups of `columns`, each as long as `fits` allows (at least one column)."""
    chunk: list[int] = []
    for k in columns:
        trial = [*chunk, k]
        if chunk and not fits(trial):
            yield chunk
            chunk = [k]
        else:
            chunk = trial
    if chunk:
        yield chunk


@dataclass
class FittedGrid:
    """A titled grid (header + body, first column the row labels) rendered to fit `options.max_width`."""

    title: str
    header: list[str]
    body: list[list[str]]
    make: TableMaker
    corner: str = "model"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.make(self.title, self.header, self.body)
        if natural_width(console, options, table) <= options.max_width or len(self.header) <= 2:
            yield table
            return
        yield from self._turned(console, options)

    def turned(self) -> tuple[list[str], list[list[str]]]:
        """Models as rows: header = corner + the grid's row labels; one line per model column."""
        labels = [line[0] for line in self.body]
        lines = [[name, *(line[k] for line in self.body)] for k, name in enumerate(self.header[1:], start=1)]
        return [self.corner, *labels], lines

    def _turned(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        header, lines = self.turned()
        for part, columns in enumerate(self._chunks(console, options, header, lines)):
            cut_header = [header[0], *(header[k] for k in columns)]
            cut_lines = [[line[0], *(line[k] for k in columns)] for line in lines]
            span = header[columns[0]] if len(columns) == 1 else f"{header[columns[0]]} … {header[columns[-1]]}"
            suffix = f" — models as rows ({span})"
            yield self.make(self.title + suffix if part == 0 else suffix.lstrip(" —"), cut_header, cut_lines)

    def _chunks(self, console: Console, options: ConsoleOptions, header: list[str],
                lines: Sequence[list[str]]) -> Iterator[list[int]]:
        """Groups of column indexes (after the model column), each as many as fit the width (at least one)."""
        def fits(trial: list[int]) -> bool:
            table = self.make("", [header[0], *(header[j] for j in trial)],
                              [[line[0], *(line[j] for j in trial)] for line in lines])
            return natural_width(console, options, table) <= options.max_width

        return column_chunks(fits, range(1, len(header)))


ColumnsMaker = Callable[[str, list[int], bool], Table]
"""Builds the table of the given column indexes (title, columns, whether it is the last part: notes go under it)."""


@dataclass
class SplitTable:
    """A table of `n_columns` columns whose first `keep` label the rows: split into column groups that each fit the
    width with whole words, the labels repeated in every group; as laid out when it fits."""

    title: str
    n_columns: int
    make: ColumnsMaker
    keep: int = 1

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        every = list(range(self.n_columns))
        whole = self.make(self.title, every, True)
        if self.n_columns <= self.keep + 1 or unbroken_width(console, options, whole) <= options.max_width:
            yield whole_words(console, options, whole)
            return
        labels = every[:self.keep]

        def fits(trial: list[int]) -> bool:
            return unbroken_width(console, options, self.make("", [*labels, *trial], False)) <= options.max_width

        groups = list(column_chunks(fits, every[self.keep:]))
        for k, group in enumerate(groups):
            title = f"{self.title} ({k + 1} of {len(groups)})"
            yield whole_words(console, options, self.make(title, [*labels, *group], k == len(groups) - 1))
