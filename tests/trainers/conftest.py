"""The trainer tests (`-m trainers`): the trainers' released code from the `trainers-test` extra, GPU-only modules
stood in for (`gpu_stubs.py`). Each test skips when its trainer is not installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.trainers)
