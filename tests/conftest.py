"""Shared pytest fixtures. ADD fixtures here; never rewrite someone else's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_server import FakeServer


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """A started fake OpenAI-compatible server on loopback (see tests/fake_server.py for the API)."""
    with FakeServer() as server:
        yield server


@pytest.fixture(scope="session")
def bench_root() -> Path:
    """The shared HoWToBench copy ($HOWTOBENCH_DATA, set by scripts/test); fails loudly when it is missing."""
    root = Path(os.environ.get("HOWTOBENCH_DATA", "/work/shared/howtobench-data"))
    assert (root / "completion" / "aligned.jsonl").is_file(), f"benchmark data not found at {root}"
    return root


@pytest.fixture(scope="session")
def paper_path() -> Path:
    """The paper's markdown ($HOWTOBENCH_PAPER; tests check our data against its appendices); fails loudly when it
    is missing."""
    path = Path(os.environ.get("HOWTOBENCH_PAPER", "/work/shared/spec/howtobench-paper.md"))
    assert path.is_file(), f"paper not found at {path} (set HOWTOBENCH_PAPER)"
    return path
