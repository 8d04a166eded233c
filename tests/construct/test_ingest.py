"""Ingest: sources kept, duplicates and lengths dropped, language detected, bad rows named by file:line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from howtobench.construct import text as tx
from howtobench.construct.ingest import IngestLimits, ingest
from howtobench.construct.records import SourceText
from howtobench.construct.workfile import INGEST, read_stage
from howtobench.errors import RowError


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets (how near two texts' shingle sets are, for the premises below)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)

ZH = "春天来了，河边的柳树发了新芽。孩子们在草地上放风筝，老人坐在石凳上晒太阳。" * 4
EN = "The river was quiet that morning, and the boats waited by the pier for the fog to lift. " * 4
LIMITS = IngestLimits(min_chars=50, max_chars=5000)


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                    encoding="utf-8")
    return path


def test_language_rule() -> None:
    assert tx.detect_language(ZH) == "zh"
    assert tx.detect_language(EN) == "en"
    # 3 CJK of 8 letters = 37.5% > 30%: Chinese
    assert tx.detect_language("abcde 中文字") == "zh"
    assert tx.detect_language("abcdefgh 中文") == "en"  # 2 of 10 = 20%


def test_paragraph_canonical_form() -> None:
    assert tx.paragraphs("a\nb\n\nc") == ["a\nb", "c"]
    assert tx.paragraphs("line one\r\nline two\n") == ["line one", "line two"]
    assert tx.canonical("  x \n\n\n\n y ") == "x\n\ny"


def test_folder_ingest_keeps_source_and_license(tmp_path: Path) -> None:
    folder = tmp_path / "texts"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text(ZH, encoding="utf-8")
    (folder / "sub" / "b.md").write_text(EN, encoding="utf-8")
    (folder / "skip.csv").write_text(EN, encoding="utf-8")
    report = ingest([folder], tmp_path / "build", license="CC0", limits=LIMITS)
    rows = list(read_stage(tmp_path / "build" / INGEST, SourceText, "text_id").values())
    assert [(r.source, r.license, r.language) for r in rows] == [("a.txt", "CC0", "zh"), ("sub/b.md", "CC0", "en")]
    assert report.kept == 2 and report.by_language == {"zh": 1, "en": 1}
    ingest([folder], tmp_path / "labelled", license="CC0", limits=LIMITS, source="my-site")
    labelled = read_stage(tmp_path / "labelled" / INGEST, SourceText, "text_id").values()
    assert [r.source for r in labelled] == ["my-site", "my-site"]


def test_duplicates_lengths_and_bad_rows(tmp_path: Path) -> None:
    near = EN.replace("morning", "evening", 1)  # one word changed: 5-gram Jaccard stays >= 0.9
    assert jaccard(tx.shingles(EN), tx.shingles(near)) >= 0.9
    src = _jsonl(tmp_path / "in.jsonl", [
        {"text": ZH, "source": "s1", "license": "CC-BY"},
        {"text": ZH.replace("。", "。  "), "source": "s2"},  # exact after whitespace normalization
        {"text": EN, "source": "s3"},
        {"text": near, "source": "s4"},
        {"text": "太短了。", "source": "s5"},
        {"text": "x" * 6000, "source": "s6"},
        "{not json",
        {"text": ZH + "新", "source": ""},
    ])
    report = ingest([src], tmp_path / "b", license="unknown", limits=LIMITS)
    dropped = report.dropped
    assert (report.read, report.kept, dropped["exact_duplicates"], dropped["near_duplicates"]) == (6, 2, 1, 1)
    assert (report.dropped["too_short"], report.dropped["too_long"]) == (1, 1)
    assert report.bad_rows == [f"{src}:7: not valid JSON (Expecting property name enclosed in double quotes)",
                               f"{src}:8: missing or empty string field 'source'"]
    rows = read_stage(tmp_path / "b" / INGEST, SourceText, "text_id")
    assert [(r.source, r.license) for r in rows.values()] == [("s1", "CC-BY"), ("s3", "unknown")]
    with pytest.raises(RowError, match=r"in.jsonl:7"):
        ingest([src], tmp_path / "strict", limits=LIMITS, strict=True)


def test_reingest_is_resumable(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [{"text": ZH, "source": "s1"}])
    ingest([src], tmp_path / "b", limits=LIMITS)
    more = _jsonl(tmp_path / "more.jsonl", [{"text": ZH, "source": "s1"}, {"text": EN, "source": "s2"}])
    report = ingest([more], tmp_path / "b", limits=LIMITS)
    assert (report.dropped["already_present"], report.kept) == (1, 1)
    assert len(read_stage(tmp_path / "b" / INGEST, SourceText, "text_id")) == 2


def test_near_duplicates_found_among_many(tmp_path: Path) -> None:
    """LSH candidates: a lightly edited copy is caught among unrelated texts, and unrelated ones are kept."""
    rng = random.Random(0)
    pool = [chr(0x4E00 + i) for i in range(3000)]
    texts = ["".join(rng.choice(pool) for _ in range(400)) for _ in range(200)]
    edited = "".join("改" if i % 100 == 0 else c for i, c in enumerate(texts[57]))  # 4 edits: Jaccard ~0.9+
    assert jaccard(tx.shingles(texts[57]), tx.shingles(edited)) >= 0.9
    src = _jsonl(tmp_path / "in.jsonl", [{"text": t, "source": f"s{i}"} for i, t in enumerate([*texts, edited])])
    report = ingest([src], tmp_path / "b", limits=LIMITS)
    assert (report.kept, report.dropped["near_duplicates"]) == (200, 1)
