"""Completion blanks: whole paragraphs, one marker, exact reference, seeded, release format."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from howtobench.construct.completion import BLANK, blank_out, rng_for
from howtobench.construct.text import paragraphs

PARAS = [f"第{i}段。" + "内容" * i for i in range(1, 25)]
TEXT = "\n\n".join(PARAS)


@pytest.mark.parametrize("seed", range(30))
def test_blank_is_whole_paragraphs_and_reference_is_exact(seed: int) -> None:
    b = blank_out(TEXT, np.random.default_rng(seed))
    assert 1 <= b.removed <= 10 and b.start >= 1
    info = paragraphs(b.information)
    assert info.count(BLANK) == 1 and info.index(BLANK) == b.start
    assert b.reference == "\n\n".join(PARAS[b.start : b.start + b.removed])
    assert b.information.replace(BLANK, b.reference) == TEXT  # putting the reference back restores the text


def test_small_texts() -> None:
    b = blank_out("甲\n\n乙\n\n丙", np.random.default_rng(0))  # n=3: one paragraph, never the first
    assert b.removed == 1 and b.start in (1, 2)
    with pytest.raises(ValueError, match="at least 3 paragraphs"):
        blank_out("甲\n\n乙", np.random.default_rng(0))


def test_seeded_per_text() -> None:
    a = blank_out(TEXT, rng_for(7, "t0123456789ab"))
    assert a == blank_out(TEXT, rng_for(7, "t0123456789ab"))
    others = {blank_out(TEXT, rng_for(s, "t0123456789ab")) for s in range(10)}
    assert len(others) > 1


def test_same_layout_as_release(bench_root: Path) -> None:
    path = bench_root / "completion" / "aligned.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    own_paragraph = [r for r in rows if BLANK in paragraphs(r["information"])]
    assert len(own_paragraph) > len(rows) // 2  # the marker is a paragraph of its own in the release too
