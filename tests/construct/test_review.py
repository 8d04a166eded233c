"""Review: export (JSONL + escaped HTML), edits applied on import, output loads as a benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from howtobench.construct.completion import BLANK
from howtobench.construct.records import DraftItem
from howtobench.construct.review import PROVENANCE, export_review, import_review
from howtobench.construct.workfile import ITEMS, REVIEW, REVIEW_HTML, write_rows
from howtobench.data.loader import load_items
from howtobench.errors import ConfigError, RowError

EVIL = "<script>alert('x')</script> & \"quotes\""


def _items(build_dir: Path) -> None:
    common = {"bench_id": "t1", "text_id": "t1", "genre": "prose", "source": "site-a", "license": "CC0", "ok": True}
    write_rows(build_dir / ITEMS, [
        DraftItem(item_id="t1-completion", task="completion", language="zh", instruction="补写 " + BLANK,
                  information=f"甲\n\n{BLANK}\n\n丙", reference="乙", **common),
        DraftItem(item_id="t1-guide", task="guide", language="zh", instruction=EVIL, information="- 要求",
                  reference="甲\n\n乙\n\n丙", **common),
        DraftItem(item_id="t1-open", task="open", language="zh", instruction="写散文", reference="甲乙丙", **common),
        DraftItem(item_id="t2-open", task="open", language="en", instruction="Write", reference="Text",
                  **{**common, "bench_id": "t2", "text_id": "t2", "genre": "letters"}),
        DraftItem(item_id="t3-open", task="open", language="zh", ok=False, error="theme too long",
                  **{k: v for k, v in common.items() if k != "ok"}),
    ])


def _edit(build_dir: Path, changes: dict[str, dict[str, object]]) -> None:
    path = build_dir / REVIEW
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.update(changes.get(row["item_id"], {}))
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_export_escapes_html_and_keeps_edits(tmp_path: Path) -> None:
    _items(tmp_path)
    assert export_review(tmp_path) == (4, 4)  # the failed item is not offered for review
    html = (tmp_path / REVIEW_HTML).read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp;" in html
    _edit(tmp_path, {"t1-open": {"instruction": "请写一篇散文，写故乡。"}})
    assert export_review(tmp_path) == (4, 0)  # re-export does not overwrite the edit
    assert "请写一篇散文，写故乡。" in (tmp_path / REVIEW).read_text(encoding="utf-8")


def test_import_applies_edits_and_loads(tmp_path: Path) -> None:
    _items(tmp_path)
    export_review(tmp_path)
    _edit(tmp_path, {"t1-open": {"instruction": "请写一篇散文，写故乡。", "genre": "documentary"},
                     "t1-guide": {"keep": False, "note": "instruction is unsafe"}})
    out = tmp_path / "bench"
    report = import_review(tmp_path, out)
    assert (report.written, report.dropped, report.edited) == ({"completion": 1, "open": 2}, 1, 1)
    assert not (out / "guide").exists()
    row = json.loads((out / "completion" / "aligned.jsonl").read_text(encoding="utf-8"))
    assert list(row) == ["infer_id", "bench_id", "task_type", "sub_task", "basic_instruction", "information",
                         "reference", "language"]
    items = {i.id: i for i in load_items(out)}
    assert items["t1-open"].instruction == "请写一篇散文，写故乡。"
    assert (items["t1-open"].genre, items["t1-open"].sub_task) == ("prose", "纪实")  # documentary reports as prose
    assert (items["t2-open"].genre, items["t2-open"].language) == ("letters", "en")
    assert items["t1-completion"].reference == "乙"
    prov = [json.loads(line) for line in (out / PROVENANCE).read_text(encoding="utf-8").splitlines()]
    assert {p["infer_id"]: p["source"] for p in prov}["t2-open"] == "site-a"
    with pytest.raises(ConfigError, match="--overwrite"):
        import_review(tmp_path, out)


@pytest.mark.parametrize(("change", "message"), [
    ({"t1-open": {"genre": "poetry"}}, r"05_review.jsonl:3: unknown genre 'poetry'"),
    ({"t1-completion": {"information": "甲\n\n丙"}}, r"05_review.jsonl:1: a completion item needs exactly one"),
    ({"t1-guide": {"instruction": "  "}}, r"05_review.jsonl:2: instruction is empty"),
    ({"t2-open": {"colour": "red"}}, r"05_review.jsonl:4: colour: Extra inputs are not permitted"),
])
def test_bad_edits_are_rejected_with_line(tmp_path: Path, change: dict[str, dict[str, object]], message: str
                                          ) -> None:
    _items(tmp_path)
    export_review(tmp_path)
    _edit(tmp_path, change)
    with pytest.raises(RowError, match=message):
        import_review(tmp_path, tmp_path / "bench")


def test_dropped_rows_are_not_validated(tmp_path: Path) -> None:
    _items(tmp_path)
    export_review(tmp_path)
    _edit(tmp_path, {"t1-guide": {"keep": False, "instruction": ""}})
    assert import_review(tmp_path, tmp_path / "bench").dropped == 1
