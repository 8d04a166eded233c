"""Fixtures of the construction tests: a build directory with one Chinese and one English text ingested."""

from __future__ import annotations

from pathlib import Path

import pytest
from construct_helpers import EN_TEXT, ZH_TEXT, write_inputs

from howtobench.construct.ingest import IngestLimits, ingest


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    """A build directory with one Chinese and one English text ingested."""
    src = write_inputs(tmp_path / "in.jsonl", [(ZH_TEXT, "site-a"), (EN_TEXT, "site-b")])
    out = tmp_path / "build"
    ingest([src], out, limits=IngestLimits(min_chars=50))
    return out
