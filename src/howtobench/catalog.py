"""What exists, as tables: judge methods, shipped trees, tasks, genres and the paper's models (`howtobench list`).

Every catalog reads the toolkit's own registries and data files (the judge registry, `judges/trees/*.yaml`,
`genres.yaml`, the paper's Table 4), so a method, tree or genre added there shows up here without an edit.
Nothing here reads the benchmark data or starts a model.
"""

from __future__ import annotations

from collections.abc import Callable

from howtobench.data.genres import GENRES
from howtobench.data.models import TASKS
from howtobench.data.paper import ALL_ROW, paper_table4
from howtobench.data.release import EXPECTED_ROWS
from howtobench.document import Table
from howtobench.judges.base import METHODS, import_judges
from howtobench.judges.tree import TREES_DIR, load_tree

TASK_NOTES: dict[str, str] = {
    "completion": "fill the [fill in the blank] gaps of a text (no Format node in ToW)",
    "guide": "write from an instruction and an outline",
    "open": "write from the instruction alone",
}
CATALOGS: tuple[str, ...] = ("methods", "trees", "tasks", "genres", "models")


def methods_table() -> Table:
    """Every registered judge method, whether it calls a model, and what it is."""
    import_judges()
    table = Table("Judge methods (--method)", ["method", "calls a model", "what it is"])
    for method in sorted(METHODS.values(), key=lambda m: (not m.paper_scale, not m.calls_model, m.name)):
        table.add_row(method.name, "yes" if method.calls_model else "no", method.description)
    return table


def trees_table() -> Table:
    """The tree specs shipped with the toolkit (`--tree NAME` or a path to your own YAML)."""
    table = Table("Tree-of-Writing specs (--tree)", ["tree", "nodes", "leaves", "description"])
    for path in sorted(TREES_DIR.glob("*.yaml")):
        tree = load_tree(path)
        nodes = ", ".join(n.id for n in tree.nodes)
        table.add_row(path.stem, nodes, sum(len(n.leaves) for n in tree.nodes), tree.description)
    table.notes.append(f"folder: {TREES_DIR}; copy a file and edit it to add a leaf or change a scale")
    return table


def tasks_table() -> Table:
    """The three tasks of HoWToBench with their instruction counts in the public release."""
    table = Table("Tasks (--task)", ["task", "instructions", "what the model does"])
    for task in TASKS:
        table.add_row(task, EXPECTED_ROWS.get(task), TASK_NOTES.get(task, ""))
    return table


def genres_table() -> Table:
    """Every genre id (`--genre`), with the Table 4 row it is reported under."""
    table = Table("Genres (--genre)", ["genre", "中文", "English", "Table 4 row"])
    for genre in GENRES.values():
        table.add_row(genre.id, genre.zh, genre.en, "own row" if genre.is_table_row else genre.reported_as)
    return table


def models_table() -> Table:
    """The paper's ten models shipped with the release (`--models`), with their published ToW score."""
    paper = paper_table4()
    table = Table("Models shipped with the release (--models)", ["model", "paper name", "paper All (ToW)"])
    for model in paper.models:
        table.add_row(model, paper.abbreviations[model], paper.get(ALL_ROW, model))
    table.notes.append(f"scores: {paper.source}")
    return table


BUILDERS: dict[str, Callable[[], Table]] = {
    "methods": methods_table,
    "trees": trees_table,
    "tasks": tasks_table,
    "genres": genres_table,
    "models": models_table,
}
