"""Fixtures for the judge tests (ToW engineer)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def release_root() -> Path:
    """The shared benchmark copy (never copied into the repo)."""
    root = Path(os.environ.get("HOWTOBENCH_DATA", "/work/shared/howtobench-data"))
    if not (root / "guide" / "aligned.jsonl").exists():
        pytest.skip(f"benchmark data not found at {root}")
    return root
