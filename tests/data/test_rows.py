"""`read_model_rows`: the shared JSONL-of-records reader (judgments, weight samples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from howtobench.data.rows import first_json_object, is_judgments_file, read_appended_rows, read_model_rows
from howtobench.errors import DataError, RowError


class Pair(BaseModel):
    a: int
    b: str


def test_reads_rows_in_order_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n\n{"a": 2, "b": "y"}\n', encoding="utf-8")
    assert [(p.a, p.b) for p in read_model_rows(path, Pair, "pair")] == [(1, "x"), (2, "y")]


def test_bad_row_names_file_and_line_or_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n{"a": "no"}\n{"a": 3, "b": "z"}\n', encoding="utf-8")
    with pytest.raises(RowError, match=r"p\.jsonl:2: not a pair"):
        read_model_rows(path, Pair, "pair")
    skipped: list[RowError] = []
    rows = read_model_rows(path, Pair, "pair", strict=False, skipped=skipped)
    assert [p.a for p in rows] == [1, 3] and [e.line for e in skipped] == [2]


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    """One cause in words, the path once (it read "...: [Errno 2] No such file or directory: '.../none.jsonl'")."""
    missing = tmp_path / "none.jsonl"
    with pytest.raises(DataError) as info:
        read_model_rows(missing, Pair, "pair")
    assert str(info.value) == f"cannot read pair file {missing}: No such file or directory"
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b'{"a": 1}\n\xff\xfe')
    with pytest.raises(DataError, match=r"b.jsonl: not UTF-8 text \(byte 0xff at offset 9\)$"):
        read_model_rows(binary, Pair, "pair")


def test_json_objects_with_line_numbers_and_row_errors(tmp_path: Path) -> None:
    from howtobench.data.rows import iter_json_objects

    path = tmp_path / "o.jsonl"
    path.write_text('{"k": 1}\n\n{"k": 2}\n', encoding="utf-8")
    assert list(iter_json_objects(path)) == [(1, {"k": 1}), (3, {"k": 2})]
    path.write_text('{"k": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(RowError, match=r"o\.jsonl:2: expected a JSON object"):
        list(iter_json_objects(path))
    path.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"o\.jsonl:1: not valid JSON"):
        list(iter_json_objects(path))


def test_json_object_names_what_the_caller_expected(tmp_path: Path) -> None:
    """Ingest names the fields it wants; the line's own JSON error comes first either way."""
    from howtobench.data.rows import json_object

    path = tmp_path / "in.jsonl"
    assert json_object(path, 4, '{"text": "t"}', "a JSON object with text") == {"text": "t"}
    with pytest.raises(RowError) as info:
        json_object(path, 4, '"just a string"', "a JSON object with text, source, license")
    assert str(info.value) == f"{path}:4: expected a JSON object with text, source, license"
    with pytest.raises(RowError) as info:
        json_object(path, 5, "{", "a JSON object with text")
    assert str(info.value) == f"{path}:5: not valid JSON (Expecting property name enclosed in double quotes)"


def test_appended_rows_cut_a_torn_last_line_and_continue_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3, "b"')
    rows = read_appended_rows(path, json.loads, "JSON", repair=True)
    assert rows == [(1, {"a": 1}), (2, {"a": 2})]
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'


def test_appended_rows_end_a_complete_last_record_with_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}')
    assert read_appended_rows(path, json.loads, "JSON", repair=False) == [(1, {"a": 1}), (2, {"a": 2})]
    assert path.read_bytes().endswith(b"2}")  # read-only without repair
    read_appended_rows(path, json.loads, "JSON", repair=True)
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'


def test_appended_rows_name_a_bad_line_that_is_not_the_last(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"a": 1}\nnot json\n{"a": 3}\n')
    with pytest.raises(RowError, match=r"out.jsonl:2: not JSON"):
        read_appended_rows(path, json.loads, "JSON", repair=True)


def test_a_file_is_told_judgments_or_writings_by_its_first_row(tmp_path: Path) -> None:
    """One rule for `guard` and `perturb`: method + item_id and no text is a judgment; a row with its text is a
    writing even when it also names a method; no rows is neither (its reader says so); bad JSON names its line."""
    cases = {
        "judgments": ([{"method": "tow", "item_id": "i1", "model": "m", "score": 7.0}], True),
        "writings": ([{"infer_id": "i1", "model": "m", "output": "文"}], False),
        "labelled_writings": ([{"method": "tow", "item_id": "i1", "model": "m", "output": "文"}], False),
    }
    for name, (rows, judged) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n" + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        assert is_judgments_file(path) is judged, name
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert first_json_object(empty) is None and is_judgments_file(empty) is False
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n{not json\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"broken\.jsonl:2: not valid JSON"):
        is_judgments_file(broken)
