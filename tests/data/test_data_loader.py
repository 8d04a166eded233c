"""Loading items and writings: the release loads whole and fast; every bad row is named by file and line."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from howtobench.data import genres as genres_mod
from howtobench.data.loader import (
    LoadReport,
    load_items,
    load_release_writings,
    load_writings_file,
    release_models,
    select_items,
)
from howtobench.errors import DataError, RowError


def item_row(n: int, task: str = "completion", sub_task: str = "小说", **extra: Any) -> dict[str, Any]:
    return {
        "infer_id": f"infer_{n}",
        "bench_id": f"b_{n}",
        "task_type": task,
        "sub_task": sub_task,
        "basic_instruction": f"写第{n}篇",
        "information": "背景",
        "reference": "参考范文",
        **extra,
    }


def write_lines(path: Path, lines: list[str | bytes | dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = []
    for line in lines:
        if isinstance(line, dict):
            line = json.dumps(line, ensure_ascii=False)
        chunks.append(line if isinstance(line, bytes) else line.encode("utf-8"))
    path.write_bytes(b"\n".join(chunks) + b"\n")
    return path


def bench(tmp_path: Path, lines: list[str | bytes | dict[str, Any]], task: str = "completion") -> Path:
    write_lines(tmp_path / task / "aligned.jsonl", lines)
    return tmp_path


# ------------------------------------------------------------------ the release


def test_release_loads_whole(bench_root: Path) -> None:
    report = LoadReport()
    items = load_items(bench_root, report=report)
    writings = load_release_writings(bench_root, report=report, items=items)
    assert [sum(it.task == t for it in items) for t in ("completion", "guide", "open")] == [379, 456, 467]
    assert len(writings) == 13_020
    assert report.skipped == 0
    assert all(it.language == "zh" for it in items)
    assert {it.genre for it in items if it.sub_task == "公文"} == {"others"}


def test_release_empty_writings_are_kept(bench_root: Path) -> None:
    writings = load_release_writings(bench_root, ["guide"], ["deepseek-chat"])
    assert len(writings) == 456
    assert sum(w.is_empty for w in writings) == 15


def test_release_loads_fast(bench_root: Path) -> None:
    """Loading (parse, validate, check against the items) costs a small multiple of parsing the same files as plain
    JSON, measured side by side so a loaded machine slows both (1.2-1.4 times as measured here under load)."""
    start = time.perf_counter()
    writings = load_release_writings(bench_root)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    for path in sorted(bench_root.glob("*/**/*.jsonl")):
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    plain = time.perf_counter() - start
    assert len(writings) == 13_020
    assert elapsed < 5 * plain, f"loading the release took {elapsed:.2f}s, parsing its files as JSON {plain:.2f}s"


def test_release_models(bench_root: Path) -> None:
    models = release_models(bench_root, "open")
    assert len(models) == 10
    assert "deepseek-r1" in models and "Llama-3.3-70B-Instruct" in models
    assert release_models(bench_root / "nowhere", "open") == []


# ------------------------------------------------------------------ bad item rows


BAD_ITEM_CASES = [
    ("malformed JSON", '{"infer_id": "infer_2", ', "malformed JSON"),
    ("missing field", {k: v for k, v in item_row(2).items() if k != "sub_task"}, "missing field 'sub_task'"),
    ("duplicate id", item_row(1), "duplicate infer_id 'infer_1'"),
    ("unknown task", item_row(2, task="poetry"), "unknown task 'poetry'"),
    ("non-UTF-8", b'{"infer_id": "infer_2", "x": "\xff\xfe"}', "not valid UTF-8 (byte 0xff"),
    ("not an object", "[1, 2]", "expected a JSON object"),
    ("wrong type", item_row(2, information=["a"]), "field 'information'"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "bad", "message"), BAD_ITEM_CASES, ids=[c[0] for c in BAD_ITEM_CASES])
def test_bad_item_row_strict_names_file_and_line(tmp_path: Path, case: str, bad: Any, message: str) -> None:
    root = bench(tmp_path, [item_row(1), "", bad, item_row(3)])
    with pytest.raises(RowError) as info:
        load_items(root, strict=True)
    path = root / "completion" / "aligned.jsonl"
    assert (info.value.path, info.value.line) == (path, 3)
    assert str(info.value).startswith(f"{path}:3: ")
    assert message in str(info.value)


@pytest.mark.parametrize(("case", "bad", "message"), BAD_ITEM_CASES, ids=[c[0] for c in BAD_ITEM_CASES])
def test_bad_item_row_is_skipped_and_counted(tmp_path: Path, case: str, bad: Any, message: str) -> None:
    root = bench(tmp_path, [item_row(1), "", bad, item_row(3)])
    report = LoadReport()
    items = load_items(root, report=report)
    path = root / "completion" / "aligned.jsonl"
    assert [it.id for it in items] == ["infer_1", "infer_3"]
    assert report.skipped == 1
    assert report.loaded == {path: 2}
    [summary] = report.summary()
    assert summary.startswith(f"skipped 1 bad row in {path} (first: line 3: ")
    assert message in summary


def test_skips_are_logged_when_no_report_is_asked_for(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = bench(tmp_path, [item_row(1), "not json", "{}"])
    with caplog.at_level(logging.WARNING, logger="howtobench.data.loader"):
        items = load_items(root)
    assert len(items) == 1
    path = root / "completion" / "aligned.jsonl"
    assert f"skipped 2 bad rows in {path} (first: line 2: malformed JSON" in caplog.text


def test_task_type_must_match_its_folder(tmp_path: Path) -> None:
    root = bench(tmp_path, [item_row(1, task="guide")])
    with pytest.raises(RowError, match=r"aligned\.jsonl:1: task_type 'guide' in the 'completion' file"):
        load_items(root, ["completion"], strict=True)


def test_duplicate_id_across_tasks_names_first_place(tmp_path: Path) -> None:
    bench(tmp_path, [item_row(1)])
    bench(tmp_path, [item_row(1, task="guide")], task="guide")
    with pytest.raises(RowError) as info:
        load_items(tmp_path, ["completion", "guide"], strict=True)
    assert info.value.path == tmp_path / "guide" / "aligned.jsonl"
    assert f"first at {tmp_path / 'completion' / 'aligned.jsonl'}:1" in str(info.value)


def test_missing_benchmark_and_unknown_task_argument(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="howtobench data download"):
        load_items(tmp_path)
    bench(tmp_path, [item_row(1)])
    with pytest.raises(DataError, match="no benchmark file .*guide"):
        load_items(tmp_path, ["guide"])
    with pytest.raises(DataError, match="unknown task 'poems'"):
        load_items(tmp_path, ["poems"])
    # reached from the Python API and `inspect eval -T task=...`, where no CLI check runs first
    with pytest.raises(DataError, match="unknown task 'opn' \\(did you mean 'open'\\?\\); known: completion"):
        load_items(tmp_path, ["opn"])


def test_user_items_language_genre_and_bom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(genres_mod, "_warned", set())
    root = tmp_path
    path = write_lines(
        root / "completion" / "aligned.jsonl",
        [item_row(1, language="en", sub_task="story"), item_row(2, sub_task="童话", genre="fiction")],
    )
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    with pytest.warns(UserWarning, match="story"):
        items = load_items(root, strict=True)
    assert [(it.language, it.genre) for it in items] == [("en", "others"), ("zh", "fiction")]


# ------------------------------------------------------------------ writings


def test_writing_for_unknown_item_is_a_bad_row(bench_root: Path, tmp_path: Path) -> None:
    items = load_items(bench_root, ["completion"])
    path = write_lines(
        tmp_path / "mine.jsonl",
        [
            {"infer_id": items[0].id, "model": "mine", "output": "正文"},
            {"infer_id": "infer_999999", "model": "mine", "output": "正文"},
        ],
    )
    with pytest.raises(RowError, match=r"mine\.jsonl:2: item id 'infer_999999' is not in the benchmark"):
        load_writings_file(path, items, strict=True)
    report = LoadReport()
    assert len(load_writings_file(path, items, report=report)) == 1
    assert report.summary() == [
        f"skipped 1 bad row in {path} (first: line 2: item id 'infer_999999' is not in the benchmark)"
    ]


BAD_WRITING_CASES = [
    ("malformed JSON", '{"infer_id": ', "malformed JSON"),
    ("missing id", {"model": "m", "output": "x"}, "missing field 'infer_id' (or 'item_id')"),
    ("missing model", {"infer_id": "infer_2", "output": "x"}, "missing field 'model'"),
    ("missing text", {"infer_id": "infer_2", "model": "m"}, "missing field 'output' (or 'text')"),
    ("duplicate", {"infer_id": "infer_1", "model": "m", "output": "again"}, "duplicate writing for item 'infer_1'"),
    ("non-UTF-8", b'{"infer_id": "infer_2", "model": "m", "output": "\xc3\x28"}', "not valid UTF-8"),
    ("wrong type", {"infer_id": "infer_2", "model": "m", "output": 7}, "field 'output'"),
]


@pytest.mark.parametrize(("case", "bad", "message"), BAD_WRITING_CASES, ids=[c[0] for c in BAD_WRITING_CASES])
def test_bad_writing_row_names_file_and_line(tmp_path: Path, case: str, bad: Any, message: str) -> None:
    path = write_lines(tmp_path / "w.jsonl", [{"infer_id": "infer_1", "model": "m", "output": "x"}, bad])
    with pytest.raises(RowError) as info:
        load_writings_file(path, strict=True)
    assert str(info.value).startswith(f"{path}:2: ")
    assert message in str(info.value)
    report = LoadReport()
    assert len(load_writings_file(path, report=report)) == 1
    assert report.skipped == 1


def test_user_writings_aliases_and_empty_text(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "w.jsonl",
        [
            {"item_id": "infer_1", "model": "m", "text": "你好", "seconds": 1.5},
            {"infer_id": "infer_2", "model": "m", "output": ""},
            {"infer_id": "infer_3", "model": "m", "output": None},
        ],
    )
    writings = load_writings_file(path, strict=True)
    assert [(w.item_id, w.output, w.is_empty) for w in writings] == [
        ("infer_1", "你好", False),
        ("infer_2", "", True),
        ("infer_3", "", True),
    ]
    assert writings[0].model_extra == {"seconds": 1.5}


def test_release_writings_checked_against_their_task(tmp_path: Path) -> None:
    bench(tmp_path, [item_row(1)])
    bench(tmp_path, [item_row(2, task="guide")], task="guide")
    write_lines(tmp_path / "guide" / "inferences" / "m.jsonl", [{"infer_id": "infer_1", "model": "m", "output": "x"}])
    report = LoadReport()
    assert load_release_writings(tmp_path, report=report) == []
    assert report.errors[0].path == tmp_path / "guide" / "inferences" / "m.jsonl"
    assert report.errors[0].line == 1
    with pytest.raises(DataError, match="^unknown model 'other'; known: m$"):
        load_release_writings(tmp_path, ["guide"], ["other"])


# ------------------------------------------------------------------ selection


def test_select_items(bench_root: Path) -> None:
    items = load_items(bench_root)
    assert [it.id for it in select_items(items, limit=2)] == [
        it.id for t in ("completion", "guide", "open") for it in [x for x in items if x.task == t][:2]
    ]
    fiction = select_items(items, tasks=["guide"], genres=["fiction"])
    assert len(fiction) == 29 and {it.sub_task for it in fiction} == {"小说"}
    assert len(select_items(items, genres=["official"])) == 87 + 91 + 4 + 2 + 3
    assert [it.id for it in select_items(items, ids=["infer_1000"])] == ["infer_1000"]
    with pytest.raises(DataError, match="unknown genre 'novel'"):
        select_items(items, genres=["novel"])
    with pytest.raises(DataError, match="unknown genre 'poen' \\(did you mean 'poem'\\?\\)"):
        select_items(items, genres=["poen"])
    with pytest.raises(DataError, match="unknown item id 'nope'"):
        select_items(items, ids=["nope"])
