"""The shared table renderer: every format shows the same values."""

from __future__ import annotations

import json

import pytest

from howtobench.report.tables import Table, render


def _table() -> Table:
    t = Table(title="Demo", columns=["method", "rho", "n"], notes=["** p<0.05"])
    t.add_row("ToW", 0.93456, 9)
    t.add_row("a|b", None, 3)
    t.add_row("nan", float("nan"), 0)
    return t


def test_markdown_rounds_and_escapes() -> None:
    md = render(_table(), "markdown")
    assert "| method | rho | n |" in md
    assert "| ToW | 0.93 | 9 |" in md
    assert "| a\\|b | - | 3 |" in md
    assert md.rstrip().endswith("** p<0.05")


def test_csv_and_json_keep_values() -> None:
    assert render(_table(), "csv").splitlines()[1] == "ToW,0.93,9"
    doc = json.loads(render(_table(), "json"))
    assert doc["rows"][0] == {"method": "ToW", "rho": 0.93456, "n": 9}
    assert doc["rows"][2]["rho"] is None


def test_rich_text_and_bad_format() -> None:
    text = render(_table(), "table")
    assert "Demo" in text and "0.93" in text
    with pytest.raises(ValueError):
        render(_table(), "xml")
    with pytest.raises(ValueError):
        _table().add_row("too", "few")
