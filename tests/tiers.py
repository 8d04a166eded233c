"""The test tiers (issue 36 point 5): which tests `./scripts/test --fast` (`-m "not slow"`) leaves out. The
conftest hook marks them; tests/test_tiers.py checks the list."""

from __future__ import annotations

from pathlib import Path

SLOW_LIST = Path(__file__).with_name("slow_tests.txt")
SLOW_BY_MARKER = ("local_model", "ray", "browser", "trainers")
"""Tests with these markers start a model server, a Ray cluster, a browser or a trainer's recipe: slow as well."""


def slow_entries(path: Path = SLOW_LIST) -> list[str]:
    """The node ids (or files, for every test in them) that tests/slow_tests.txt lists; `#` starts a comment."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def whole_entries(path: Path = SLOW_LIST) -> frozenset[str]:
    """The entries that name a whole file or folder (no `::`): the fast tier does not collect them at all."""
    return frozenset(entry for entry in slow_entries(path) if "::" not in entry)


PATCHES_THE_PROCESS = ("tests/inspect_eval/",)
"""Tests whose library changes the whole pytest process for good: inspect_ai's eval applies nest_asyncio2, under
which `asyncio.run` neither cancels leftover tasks nor closes the loop (it hid a fake judge's open connections from
the judge-outage tests: issue 33). They run last, so no other test runs under that patch."""


def patching_tests_last(node_ids: list[str]) -> list[int]:
    """The order (indices into `node_ids`) in which to run them: every test as collected, those of
    `PATCHES_THE_PROCESS` moved to the end in their own order."""
    return sorted(range(len(node_ids)), key=lambda k: node_ids[k].startswith(PATCHES_THE_PROCESS))
