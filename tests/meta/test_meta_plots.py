"""The CJK font is found and Chinese genre names render without missing-glyph warnings."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the [plots] extra draws the figures")

from howtobench.meta.plots import new_figure, save_figure, setup_fonts


def test_chinese_labels_render(tmp_path: Path) -> None:
    family = setup_fonts()
    assert family is not None and any(k in family for k in ("CJK", "WenQuanYi", "Source Han", "SimHei", "Droid"))
    fig, ax = new_figure()
    ax.set_title("小说 Fiction / 议论文 Argumentative")
    ax.set_xlabel("边权重 edge weight")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)" when a glyph is absent
        paths = save_figure(fig, tmp_path, "cjk")
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in paths[1].read_text(encoding="utf-8")
