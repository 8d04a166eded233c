"""The output formats (`--format`): a registry that every command's choices and renderings come from.

Each format is one module of this package that calls `register` at import: it turns a
`howtobench.document.Document` (tables, lines, notes) into text (`text`, what `-o` writes and `leaderboard.md`
holds) and prints it (`show`).
Every module here is imported on first use, so a new format is one file; a package outside adds one through the
`howtobench.formats` entry points (howtobench.registry), and a test can call `register` too. The document model
is howtobench.document, which imports nothing of this package.
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from howtobench.registry import Registry

if TYPE_CHECKING:
    from rich.console import Console

    from howtobench.document import Document


class OutputFormat(Protocol):
    """A rendering of documents: `name` is the `--format` value, `label` how `--help` lists it."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def rank(self) -> int:
        """Where --help lists it (lowest first; the built-in ones 0-3, the terminal view first)."""
        ...

    @property
    def for_machines(self) -> bool:
        """Whether its readers are programs (json, csv): a command gives it numbers in columns of their own (an
        interval as low and high, not "[a, b]" text) and its full record where it has one (`Document.data`)."""
        ...

    def text(self, doc: Document) -> str:
        """The document as the file `-o` writes."""
        ...

    def show(self, doc: Document, console: Console) -> None:
        """The document printed to the terminal."""
        ...


_BUILTIN = tuple(f"{__name__}.{name}" for name in sorted(m.name for m in pkgutil.iter_modules(__path__)))
FORMATS: Registry[OutputFormat] = Registry("output format", builtin_modules=_BUILTIN)
"""The registry (howtobench.registry): this package's modules, imported on first use, then the installed
`howtobench.formats` entry points."""


def register(fmt: OutputFormat) -> OutputFormat:
    """Add a format (a name another module has taken is an error: two modules claiming one `--format` value is a
    bug); the module calling this is the format's origin."""
    return FORMATS.register(fmt.name, fmt, origin=sys._getframe(1).f_globals.get("__name__", "?"))


def unregister(name: str) -> None:
    """Remove a format (a test's or a plugin's own)."""
    FORMATS.unregister(name)


def names() -> tuple[str, ...]:
    """Every `--format` value, as --help lists them."""
    return FORMATS.names(key=lambda f: f.rank)


def output_format(name: str) -> OutputFormat:
    """The format called `name`; an unknown name is an error naming the choices."""
    if name not in FORMATS:
        raise ValueError(f"unknown table format {name!r}; choose one of {', '.join(names())}")
    return FORMATS[name]


def help_text() -> str:
    """The formats as --help lists them: 'table (terminal), markdown, csv or json (raw numbers, for scripts)'."""
    labels = [output_format(name).label for name in names()]
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} or {labels[-1]}"


@dataclass(frozen=True)
class Format:
    """A format given by two functions: the text `-o` writes (`render`) and how it is printed (`print_to`)."""

    name: str
    label: str
    rank: int
    render: Callable[[Document], str]
    print_to: Callable[[Document, Console], None]
    for_machines: bool = False

    def text(self, doc: Document) -> str:
        return self.render(doc)

    def show(self, doc: Document, console: Console) -> None:
        self.print_to(doc, console)


@dataclass(frozen=True)
class TextFormat:
    """A format whose terminal view is its text: a document with a title (the leaderboard), or any document when
    `verbatim`, is written exactly as its file; otherwise the tables (every other command) are printed one by one
    through rich, each as its own text (rich expands tabs: a format made of them, such as TSV, is `verbatim`)."""

    name: str
    label: str
    rank: int
    render: Callable[[Document], str]
    verbatim: bool = False
    for_machines: bool = False

    def text(self, doc: Document) -> str:
        return self.render(doc)

    def show(self, doc: Document, console: Console) -> None:
        if doc.title is not None or self.verbatim:
            console.file.write(self.render(doc))
            console.file.flush()
            return
        for table in doc.tables:
            console.print(self.render(replace(doc, blocks=[table])), markup=False, highlight=False, soft_wrap=True)
