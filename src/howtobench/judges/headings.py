"""The heading parser of the paper (Listing 1, Appendix M.8), made total, and the Formatting leaf scorer.

`parse_headings` keeps the paper's five patterns, their order, the level rules and the tree shape
(`{"title", "type", "subtopics"}` nodes under `{"title": "Root", "type": "root"}`), so trees match the
authors' on every text their code can parse. It deviates only where theirs raises:

1. A Markdown heading shallower than the first one gets level <= 1 in the paper, which pops the root
   off the stack and crashes on `stack[-1]`. We clamp every level to >= 2, so such a heading becomes a
   top-level section (a child of the root), which is what a reader sees.
2. Every stack access is guarded (`_parent_type`), so no sequence of list items can index past the root.
   (In the paper an `ordered` item after an `unordered` one at depth 2 reads `stack[-2]`, which is the
   root: harmless, and kept identical here.)

`score_formatting` is the deterministic Formatting leaf (a step function 0 / 5 / 10, section 3.2). It judges
the writing's OWN headings, as section 3.2 and the authors' `score_formatting` (`code/tow/evaluation/
format_node.py`) do, never the reference's; the step rule is the authors' (documented on the function), applied
to the headings Listing 1 finds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(#{1,6})\s*(.*)$"), "markdown"),
    (re.compile(r"^([一二三四五六七八九十]+[、.])\s*(.*)$"), "chinese"),
    (re.compile(r"^（([一二三四五六七八九十])）\s*(.*)$"), "chinese_second"),
    (re.compile(r"^(\d{1,2}\.)\s*(.*)$"), "ordered"),
    (re.compile(r"^(\-)\s*(.*)$"), "unordered"),
)

MIN_LEVEL = 2  # level 1 is the root; nothing may replace it (deviation 1).

Node = dict[str, Any]


def _new_root() -> Node:
    return {"title": "Root", "type": "root", "subtopics": []}


def _parent_type(stack: list[Node], depth: int) -> str | None:
    """Type of `stack[-depth]`, or None when the stack is not that deep (deviation 2)."""
    return stack[-depth]["type"] if len(stack) >= depth else None


def _level(kind: str, marker: str, stack: list[Node], base_hash: int) -> int:
    """The paper's level rule for one matched line (before clamping)."""
    if kind == "markdown":
        return len(marker) - base_hash + 2
    if kind == "chinese":
        return 2
    if kind == "chinese_second":
        return 3
    top = _parent_type(stack, 1)
    if kind == "unordered":
        return len(stack) if top == kind else len(stack) + 1
    # ordered
    if top == "ordered":
        return len(stack)
    if top == "unordered":
        return len(stack) - 1 if _parent_type(stack, 2) == "ordered" else len(stack)
    return len(stack) + 1


def heading_lines(text: str) -> Iterator[tuple[str, int, str]]:
    """(kind, level, title) of every line Listing 1 matches, in order, with the level it assigns (clamped >= 2)."""
    stack: list[Node] = [_new_root()]
    base_hash = -1
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line:
            continue
        for pattern, kind in PATTERNS:
            match = pattern.match(line)
            if not match:
                continue
            marker, content = match.groups()
            if kind == "markdown" and base_hash == -1:
                base_hash = len(marker)
            level = max(MIN_LEVEL, _level(kind, marker, stack, base_hash))
            while len(stack) >= level:
                stack.pop()
            node: Node = {"title": content.strip(), "type": kind, "subtopics": []}
            stack.append(node)
            yield kind, level, node["title"]
            break


def parse_headings(text: str) -> Node:
    """Parse the heading tree of a text exactly as Listing 1 does, without ever raising."""
    root = _new_root()
    stack: list[Node] = [root]
    for kind, level, title in heading_lines(text):
        node: Node = {"title": title, "type": kind, "subtopics": []}
        while len(stack) >= level:
            stack.pop()
        stack[-1]["subtopics"].append(node)
        stack.append(node)
    return root


# --------------------------------------------------------------------------- Formatting leaf

HEADING_KINDS: frozenset[str] = frozenset({"markdown", "chinese", "chinese_second", "ordered"})
"""Listing 1 kinds that count as titles. The authors' rule counts Markdown headers, `一、` and numbered lines
(`1、` / `1.`) as titles and leaves `-` bullets out; `ordered` is Listing 1's numbered line."""
SHORT_TEXT = 500
"""Characters under which a text without any title is fine (the authors' threshold, `len(content) < 500`)."""


def score_formatting(writing: str) -> tuple[int, str]:
    """The Formatting leaf: a step score 0 / 5 / 10 and why, from the writing's own heading lines.

    The authors' step rule, applied to the titles Listing 1 finds (`HEADING_KINDS`, in document order):
        no title at all        -> 10 if the text is shorter than 500 characters, else 5 (a long text
                                  without any title is only moderately formatted);
        a title whose level is more than one deeper than the title before it (e.g. `#` then `###`,
        or `一、` then `####` under a `#` base) -> 0 (a broken hierarchy);
        otherwise              -> 10.
    Listing 1 and the authors' own regexes disagree on a few title shapes (Listing 1 knows `（一）`, not
    `第一章` or `1、`), so on the release this rule gives the authors' value on 98.0% of Guide and 98.7%
    of Open writings; docs/fidelity.md records it.
    The 10 / 5 for a text without titles is that rule judging a real text, not a stand-in for a missing score: an
    empty writing has no formatting to judge, so it is refused here (ToW records it as empty, with no score
    counted by default) rather than passing as "short, no titles needed".
    """
    if not writing.strip():
        raise ValueError("an empty writing has no formatting to score (ToW records it as an empty writing)")
    titles = [(level, title) for kind, level, title in heading_lines(writing) if kind in HEADING_KINDS]
    if not titles:
        if len(writing) < SHORT_TEXT:
            return 10, f"no titles, and the text is short ({len(writing)} < {SHORT_TEXT} characters)"
        return 5, f"no titles in a text of {len(writing)} characters"
    for (before, _), (level, title) in zip(titles, titles[1:], strict=False):
        if level - before > 1:
            return 0, f"title {title!r} jumps from level {before} to level {level}"
    return 10, f"{len(titles)} titles, no level skipped"
