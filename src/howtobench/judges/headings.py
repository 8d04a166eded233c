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

`score_formatting` is the deterministic Formatting leaf (a step function 0 / 5 / 10, section 3.2):
its rule is documented on the function and judged relative to the reference's headings when one exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


def parse_headings(text: str) -> Node:
    """Parse the heading tree of a text exactly as Listing 1 does, without ever raising."""
    root = _new_root()
    stack: list[Node] = [root]
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
            node: Node = {"title": content.strip(), "type": kind, "subtopics": []}
            while len(stack) >= level:
                stack.pop()
            stack[-1]["subtopics"].append(node)
            stack.append(node)
            break
    return root


# --------------------------------------------------------------------------- Formatting leaf

HEADING_KINDS: frozenset[str] = frozenset({"markdown", "chinese", "chinese_second"})
"""Kinds that are section headings. List items (`ordered`, `unordered`) are body formatting, not titles."""


@dataclass(frozen=True)
class HeadingProfile:
    """What the Formatting rule looks at in one heading tree."""

    headings: int
    levels_skipped: int
    mixed_levels: int
    empty_titles: int

    @property
    def consistent(self) -> bool:
        return self.levels_skipped == 0 and self.mixed_levels == 0 and self.empty_titles == 0


def _walk(node: Node, depth: int, kinds_at: dict[int, set[str]], counts: dict[str, int]) -> None:
    """Collect heading statistics; `depth` counts heading ancestors only (lists are transparent)."""
    for child in node.get("subtopics", []):
        is_heading = child["type"] in HEADING_KINDS
        child_depth = depth
        if is_heading:
            child_depth = depth + 1
            counts["headings"] += 1
            counts["empty"] += 0 if child["title"] else 1
            kinds_at.setdefault(child_depth, set()).add(child["type"])
        _walk(child, child_depth, kinds_at, counts)


def _markdown_skips(text: str) -> int:
    """Markdown headings that go more than one level deeper than the previous heading (e.g. `#` then `###`)."""
    skips, previous = 0, None
    for raw_line in text.splitlines():
        match = PATTERNS[0][0].match(raw_line.strip())
        if not match:
            continue
        depth = len(match.group(1))
        if previous is not None and depth > previous + 1:
            skips += 1
        previous = depth
    return skips


def heading_profile(text: str) -> HeadingProfile:
    """Count headings, skipped levels, levels mixing heading styles, and empty heading titles."""
    kinds_at: dict[int, set[str]] = {}
    counts = {"headings": 0, "empty": 0}
    _walk(parse_headings(text), 0, kinds_at, counts)
    mixed = sum(1 for kinds in kinds_at.values() if len(kinds) > 1)
    return HeadingProfile(counts["headings"], _markdown_skips(text), mixed, counts["empty"])


def score_formatting(writing: str, reference: str | None = None) -> tuple[int, str]:
    """The deterministic Formatting leaf: a step score 0 / 5 / 10 and the reason.

    Only section headings count (Markdown `#`, `一、`, `（一）`); list items are body text here.
    With a reference that has headings:
        10  the writing has headings and their hierarchy is consistent;
         5  it has headings but the hierarchy is inconsistent (a skipped Markdown level, two heading
            styles at one level, an empty heading);
         0  it has no headings although the reference is organised by them.
    With a reference without headings (a continuous piece: fiction, prose, a letter...):
        10  the writing has no headings either, or a consistent hierarchy of at most 2 headings (a title);
         5  it adds a consistent hierarchy of more headings that the reference does not use;
         0  it adds inconsistent headings.
    Without a reference (reference-free mode), headings are judged on their own:
        10  no headings, or a consistent hierarchy;  5  inconsistent headings.  (Never 0: nothing to miss.)
    """
    mine = heading_profile(writing)
    if reference is None or not reference.strip():
        if mine.headings == 0 or mine.consistent:
            return 10, "headings absent or consistently nested"
        return 5, _inconsistency(mine)
    theirs = heading_profile(reference)
    if theirs.headings > 0:
        if mine.headings == 0:
            return 0, f"no headings, while the reference is organised by {theirs.headings} headings"
        if mine.consistent:
            return 10, f"{mine.headings} headings, consistently nested (reference has {theirs.headings})"
        return 5, _inconsistency(mine)
    if mine.headings == 0:
        return 10, "no headings, like the reference"
    if not mine.consistent:
        return 0, "adds headings the reference does not use, and they are inconsistent: " + _inconsistency(mine)
    if mine.headings <= 2:
        return 10, "only a title-like heading, consistently formatted"
    return 5, f"adds {mine.headings} headings to a genre whose reference is continuous text"


def _inconsistency(profile: HeadingProfile) -> str:
    parts = []
    if profile.levels_skipped:
        parts.append(f"{profile.levels_skipped} skipped heading level(s)")
    if profile.mixed_levels:
        parts.append(f"{profile.mixed_levels} level(s) mixing heading styles")
    if profile.empty_titles:
        parts.append(f"{profile.empty_titles} empty heading(s)")
    return "inconsistent headings: " + ", ".join(parts)
