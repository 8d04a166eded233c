"""Terminal tables that fit the terminal: as laid out when they fit, else turned and split — never cut.

A leaderboard grid has one column per model. With ten models and 95% intervals it is wider than most
terminals, and rich then shrinks columns until some vanish (at 80 columns three models disappeared without a
word). `FittedGrid` measures the table at the width it is given when printed: if it fits it prints as is;
otherwise the models become rows and the grid's rows (tasks, genres, All) become columns, split into as many
tables as the width needs, each repeating the model column. Every cell is printed somewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table

TableMaker = Callable[[str, list[str], list[list[str]]], Table]


def natural_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    return Measurement.get(console, options.update(width=10_000), table).maximum


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
        chunk: list[int] = []
        for k in range(1, len(header)):
            trial = [*chunk, k]
            table = self.make("", [header[0], *(header[j] for j in trial)],
                              [[line[0], *(line[j] for j in trial)] for line in lines])
            if chunk and natural_width(console, options, table) > options.max_width:
                yield chunk
                chunk = [k]
            else:
                chunk = trial
        if chunk:
            yield chunk
