"""Shared pytest fixtures. ADD fixtures here; never rewrite someone else's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_server import FakeServer
from tiers import SLOW_BY_MARKER, patching_tests_last, slow_entries, whole_entries


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


# ---------------------------------------------------------------- tiers (issue 36): `./scripts/test --fast`


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: it must see these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` what slow_tests.txt lists and what carries a marker of the slow kinds, so `-m "not slow"`
    (`./scripts/test --fast`) is the edit-test loop's tier (tests/test_tiers.py checks every entry names a test);
    and run the tests that patch the whole process last (`tiers.PATCHES_THE_PROCESS`)."""
    entries = slow_entries()
    for item in items:
        listed = any(item.nodeid == e or item.nodeid.startswith((e + "::", e + "[", e + "/")) for e in entries)
        if listed or any(item.get_closest_marker(name) for name in SLOW_BY_MARKER):
            item.add_marker(pytest.mark.slow)
    order = patching_tests_last([item.nodeid for item in items])
    items[:] = [items[k] for k in order]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under `-m "not slow"` exactly (the fast tier), a file or folder slow_tests.txt lists whole is not even
    imported: what it imports (inspect_ai, Ray, pandas) is seconds of the tier's time before any test runs."""
    if config.getoption("markexpr", "") != "not slow":
        return None
    relative = collection_path.relative_to(config.rootpath).as_posix()
    return True if relative in whole_entries() else None
