"""`howtobench list ...`: every catalog from the toolkit's own registries, in every --format."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from howtobench.cli.main import app


def listed(what: str) -> dict[str, dict[str, object]]:
    result = CliRunner().invoke(app, ["list", what, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    return {str(row[doc["columns"][0]]): row for row in doc["rows"]}


def test_methods_lists_the_registry_and_which_call_a_model() -> None:
    methods = listed("methods")
    assert {"tow", "single", "autoplan", "rubric", "average", "bleu", "rouge", "sacrebleu"} <= set(methods)
    assert methods["tow"]["calls a model"] == "yes" and methods["rouge"]["calls a model"] == "no"


def test_tasks_genres_trees_models() -> None:
    tasks = listed("tasks")
    assert {t: r["instructions"] for t, r in tasks.items()} == {"completion": 379, "guide": 456, "open": 467}
    genres = listed("genres")
    assert sum(1 for r in genres.values() if r["Table 4 row"] == "own row") == 12
    assert genres["documentary"]["Table 4 row"] == "prose" and genres["poem"]["中文"] == "诗歌"
    assert listed("trees")["default"]["leaves"] == 8
    models = listed("models")
    assert len(models) == 10 and models["deepseek-r1"]["paper name"] == "DS-R1"
    assert models["deepseek-r1"]["paper All (ToW)"] == 6.10


def test_terminal_table_keeps_brackets_and_unknown_catalog_suggests() -> None:
    out = CliRunner().invoke(app, ["list", "tasks"], terminal_width=200).output
    assert "[fill in the blank]" in out
    bad = CliRunner().invoke(app, ["list", "model"])
    assert bad.exit_code == 2 and "did you mean 'models'?" in bad.output
    md = CliRunner().invoke(app, ["list", "genres", "--format", "markdown"]).output
    assert "| argumentative | 议论文 |" in md
