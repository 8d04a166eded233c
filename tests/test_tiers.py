"""The fast tier's list (issue 36 point 5): every entry of tests/slow_tests.txt names a test that exists, so a
renamed or moved slow test fails here instead of dropping silently into `./scripts/test --fast`."""

from __future__ import annotations

import ast
from pathlib import Path

from tiers import SLOW_LIST, patching_tests_last, slow_entries

TESTS = SLOW_LIST.parent
ROOT = TESTS.parent


def defined_tests(path: Path) -> set[str]:
    """`test_*` functions of a module, and `Class::test_*` of its test classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        names |= {f"{cls.name}::{f.name}" for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {name for name in names if name.split("::")[-1].startswith("test")}


def test_every_slow_entry_names_an_existing_test() -> None:
    entries = slow_entries()
    assert entries, "tests/slow_tests.txt lists no test"
    missing = []
    for entry in entries:
        file, _, test = entry.partition("::")
        path = ROOT / file
        if not path.exists() or (test and test.split("[")[0] not in defined_tests(path)):
            missing.append(entry)
    assert missing == [], f"tests/slow_tests.txt names tests that do not exist: {missing}"
    assert len(entries) == len(set(entries)), "an entry is listed twice"


def test_the_list_reads_node_ids_and_drops_comments(tmp_path: Path) -> None:
    listed = tmp_path / "slow.txt"
    listed.write_text("# heading\ntests/a.py::test_x  # 12 s\n\ntests/b.py\n", encoding="utf-8")
    assert slow_entries(listed) == ["tests/a.py::test_x", "tests/b.py"]


def test_the_tests_that_patch_the_process_run_last_in_their_order() -> None:
    ids = ["tests/a.py::t1", "tests/inspect_eval/test_parity.py::p1", "tests/b.py::t2",
           "tests/inspect_eval/test_scorers.py::s1", "tests/c/test_inspect_eval_like.py::t3"]
    assert [ids[k] for k in patching_tests_last(ids)] == [
        "tests/a.py::t1", "tests/b.py::t2", "tests/c/test_inspect_eval_like.py::t3",
        "tests/inspect_eval/test_parity.py::p1", "tests/inspect_eval/test_scorers.py::s1"]
