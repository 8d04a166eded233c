"""Crafted degenerate writings (docs/guard.md) built on a real item and writing of the release."""

from __future__ import annotations

import json
from pathlib import Path

from howtobench.data.loader import load_items
from howtobench.data.models import Item


def guide_item_and_writing(root: Path, infer_id: str = "infer_354") -> tuple[Item, str]:
    """A guide item and gpt-4o's writing for it (a normal writing: the guard flags nothing in it)."""
    item = next(i for i in load_items(root, ["guide"]) if i.id == infer_id)
    path = root / "guide" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return item, next(r["output"] for r in rows if r["infer_id"] == infer_id)


def repeated_paragraph(writing: str, times: int = 30) -> str:
    """The writing's first paragraph, `times` over."""
    paragraph = next(p for p in writing.split("\n") if len(p.strip()) > 40)
    return "\n\n".join([paragraph] * times)


def padded(writing: str) -> str:
    """The writing with the same filler sentence appended until it is three times as long."""
    filler = "这一点非常重要，值得我们每一个人深入思考。"
    return writing + "\n\n" + filler * (2 * len(writing) // len(filler))


ENGLISH = ("The history of the academy is a story of artists and teachers. Founded in 1928, it moved during the war "
           "and returned to Hangzhou, where it grew into one of the leading art schools of the country. ") * 6
STUB = "好的，我来写。"
