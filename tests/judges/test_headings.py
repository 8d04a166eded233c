"""The heading parser of Listing 1 (same trees as the paper, never raising) and the Formatting leaf rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from howtobench.judges.headings import heading_lines, parse_headings, score_formatting


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


def test_heading_lines_carry_listing_1_levels() -> None:
    text = "# T\n## A\n- x\n1. y\n#### skipped\n一、甲\n（一）乙"
    assert list(heading_lines(text)) == [
        ("markdown", 2, "T"), ("markdown", 3, "A"), ("unordered", 4, "x"), ("ordered", 4, "y"),
        ("markdown", 5, "skipped"), ("chinese", 2, "甲"), ("chinese_second", 3, "乙"),
    ]


def test_formatting_without_titles_depends_on_length() -> None:
    """The authors' rule: no title -> 10 under 500 characters, 5 from 500 on (the writing alone, no reference)."""
    assert score_formatting("短文。" * 166)[0] == 10  # 498 characters
    assert score_formatting("短" * 499)[0] == 10
    assert score_formatting("短" * 500)[0] == 5
    assert score_formatting("- 要点\n" * 100)[0] == 5  # bullets are not titles: 600 characters, no title


def test_an_empty_writing_gets_no_formatting_score() -> None:
    """Not "short, no titles needed" (10): an empty text has nothing to judge, and ToW handles it as empty."""
    for text in ("", "  \n\t "):
        with pytest.raises(ValueError, match="empty writing"):
            score_formatting(text)


def test_formatting_level_jump_of_more_than_one_is_zero() -> None:
    assert score_formatting("# 题\n## 甲\n## 乙\n### 丙")[0] == 10
    assert score_formatting("# 题\n### 甲")[0] == 0  # level 2 -> 4
    assert score_formatting("## 题\n#### 甲\n## 乙")[0] == 0
    assert score_formatting("### 题\n# 大\n## 中")[0] == 10  # going up is fine; # clamps to level 2
    assert score_formatting("一、甲\n（一）乙\n1. 丙\n二、丁")[0] == 10  # 2, 3, 4, 2
    assert score_formatting("# 总\n一、甲\n#### 深")[0] == 0  # 2, 2, then 5
    assert score_formatting("1. 一\n2. 二\n3. 三")[0] == 10  # numbered lines are titles, all at one level


def test_formatting_ignores_the_reference() -> None:
    """Section 3.2 and the authors judge the writing's own headings: the function takes no reference."""
    assert score_formatting.__code__.co_argcount == 1


def _authors_formatting(content: str) -> int:
    """The authors' rule on their own title regexes (format_node.score_formatting), restated for comparison."""
    markdown = re.compile(r"^#{1,6}\s+.+")
    numbered = re.compile(
        r"^[一二三四五六七八九十百]+[、.．]\s*.+|^第[一二三四五六七八九十百]+[章节部分]\s*.+|^\d+[、.．]\s*.+"
    )
    levels, any_title = [], False
    for line in (x.strip() for x in content.strip().split("\n")):
        if markdown.match(line):
            levels.append(len(line) - len(line.lstrip("#")))
            any_title = True
        elif numbered.match(line):
            any_title = True
    if not any_title:
        return 10 if len(content) < 500 else 5
    return 0 if any(b - a > 1 for a, b in zip(levels, levels[1:], strict=False)) else 10


def test_formatting_agrees_with_the_authors_rule_on_the_release(bench_root: Path) -> None:
    """Listing 1 + the authors' step rule vs the authors' function: the counts docs/fidelity.md quotes."""
    agree: dict[str, list[int]] = {"guide": [0, 0], "open": [0, 0]}
    for task, counts in agree.items():
        for path in sorted((bench_root / task / "inferences").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                text = json.loads(line).get("output") or ""
                if text:
                    counts[0] += score_formatting(text)[0] == _authors_formatting(text)
                    counts[1] += 1
    assert agree == {"guide": [4438, 4529], "open": [4593, 4655]}  # 98.0% and 98.7%
