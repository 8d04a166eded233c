"""The heading parser of Listing 1 (same trees as the paper, never raising) and the Formatting leaf rule."""

from __future__ import annotations

import json
from pathlib import Path

from howtobench.judges.headings import heading_profile, parse_headings, score_formatting


def titles(node: dict) -> list:
    """Compact view: [(type, title, [children...]), ...]."""
    return [(c["type"], c["title"], titles(c)) for c in node["subtopics"]]


def test_root_shape_and_empty_text() -> None:
    assert parse_headings("") == {"title": "Root", "type": "root", "subtopics": []}
    assert parse_headings("just prose\n\nmore prose") == {"title": "Root", "type": "root", "subtopics": []}


def test_markdown_levels_relative_to_first_heading() -> None:
    tree = parse_headings("## A\ntext\n### A1\n### A2\n## B")
    assert titles(tree) == [
        ("markdown", "A", [("markdown", "A1", []), ("markdown", "A2", [])]),
        ("markdown", "B", []),
    ]


def test_chinese_and_chinese_second() -> None:
    tree = parse_headings("一、总则\n（一）目的\n（二）范围\n二、细则")
    assert titles(tree) == [
        ("chinese", "总则", [("chinese_second", "目的", []), ("chinese_second", "范围", [])]),
        ("chinese", "细则", []),
    ]


def test_chinese_with_dot_separator() -> None:
    assert titles(parse_headings("十一.结语")) == [("chinese", "结语", [])]


def test_ordered_and_unordered_lists_nest() -> None:
    tree = parse_headings("1. first\n- a\n- b\n2. second")
    assert titles(tree) == [
        ("ordered", "first", [("unordered", "a", []), ("unordered", "b", [])]),
        ("ordered", "second", []),
    ]


def test_mixed_nesting_headings_with_lists() -> None:
    text = "# 标题\n一、背景\n1. 起因\n- 细节\n（一）小节\n二、结论"
    tree = parse_headings(text)
    assert titles(tree) == [
        ("markdown", "标题", []),
        ("chinese", "背景", [("ordered", "起因", [("unordered", "细节", [])]), ("chinese_second", "小节", [])]),
        ("chinese", "结论", []),
    ]


def test_crash_case_shallower_markdown_heading_becomes_top_level() -> None:
    # The paper's code pops the root here (level 1) and raises IndexError; we clamp to level 2,
    # so every heading shallower than the first one is a top-level section.
    tree = parse_headings("### 小节\n正文\n# 大标题\n## 二级\n#### 更深")
    assert titles(tree) == [
        ("markdown", "小节", []),
        ("markdown", "大标题", []),
        ("markdown", "二级", [("markdown", "更深", [])]),
    ]


def test_ordered_after_unordered_at_depth_two_reads_root_safely() -> None:
    tree = parse_headings("- a\n1. b")
    assert titles(tree) == [("unordered", "a", []), ("ordered", "b", [])]


def test_pathological_inputs_never_raise() -> None:
    samples = ["#", "-", "1.", "（一）", "一、", "#######x", "-\n-\n-\n1.\n#\n" * 50, "\x00\u2028# a\r\n- b", "﻿# bom"]
    for text in samples:
        assert parse_headings(text)["type"] == "root"


def test_every_release_writing_parses(bench_root: Path) -> None:
    count = 0
    for path in sorted(bench_root.glob("*/inferences/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                parse_headings(json.loads(line).get("output") or "")
                count += 1
    assert count == 13020


def test_profile_counts_only_headings() -> None:
    profile = heading_profile("# T\n## A\n- x\n- y\n#### skipped\n一、mixed at level 2")
    assert profile.headings == 4
    assert profile.levels_skipped == 1
    assert profile.mixed_levels == 1


def test_formatting_with_headed_reference() -> None:
    reference = "# 报告\n## 一\n## 二"
    assert score_formatting("# 题\n## 甲\n## 乙", reference)[0] == 10
    assert score_formatting("# 题\n### 甲", reference)[0] == 5
    assert score_formatting("plain text only", reference)[0] == 0


def test_formatting_with_continuous_reference() -> None:
    reference = "他走了很久。\n\n天黑了。"
    assert score_formatting("一段故事。", reference)[0] == 10
    assert score_formatting("# 题目\n故事。", reference)[0] == 10
    assert score_formatting("# 题\n## a\n## b\n## c", reference)[0] == 5
    assert score_formatting("# 题\n### a\n一、b", reference)[0] == 0


def test_formatting_without_reference_is_never_zero() -> None:
    assert score_formatting("prose", None)[0] == 10
    assert score_formatting("# a\n## b", None)[0] == 10
    assert score_formatting("# a\n### b", None)[0] == 5
