"""List flags take commas and repeats alike (with a hint when both are mixed), and genres their Chinese labels too
(issue 23, 15)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from howtobench.cli.main import app


def judged(bench_root: Path, tmp_path: Path, name: str, *flags: str) -> tuple[str, list[tuple[str, str, str]]]:
    out = tmp_path / f"{name}.jsonl"
    result = CliRunner().invoke(app, ["judge", "--method", "rouge", "--data", str(bench_root), "--limit", "40",
                                      "-o", str(out), "--workspace", str(tmp_path / "ws"), "--no-progress", *flags])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return result.output, sorted((r["item_id"], r["model"], r["genre"]) for r in rows)


def test_commas_repeats_and_chinese_genre_labels_select_the_same(bench_root: Path, tmp_path: Path) -> None:
    _, repeated = judged(bench_root, tmp_path, "a", "--genre", "letters", "--genre", "poem", "--task", "guide",
                         "--task", "open", "--models", "deepseek-r1", "--models", "gpt-4o-2024-11-20")
    said, mixed = judged(bench_root, tmp_path, "b", "--genre", "书信,poem", "--task", "guide,open", "--models",
                         "deepseek-r1,gpt-4o-2024-11-20")
    assert repeated == mixed and len(repeated) > 4
    assert {model for _, model, _ in repeated} == {"deepseek-r1", "gpt-4o-2024-11-20"}
    assert "hint:" not in said  # commas alone: no hint
    said, both = judged(bench_root, tmp_path, "c", "--genre", "书信,poem", "--genre", "prose", "--task", "guide",
                        "--task", "open", "--models", "deepseek-r1,gpt-4o-2024-11-20")
    assert {genre for _, _, genre in both} == {"letters", "poem", "prose"}
    assert ("hint: --genre takes a list as commas (--genre a,b) or repeats (--genre a --genre b); both were given, "
            "and all 3 values are used") in said


def test_an_unknown_chinese_label_is_named_with_the_known_ids(bench_root: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--method", "rouge", "--data", str(bench_root), "--genre", "书",
                                      "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "unknown genre '书'; known: argumentative, comment, poem" in result.output
