"""Issue 34, items 9 and 12: bad input is one line naming what is wrong (file and line, or the field), exit 2, never
a traceback or a silent acceptance."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_bad_values import console

from howtobench.data.loader import load_items

JUDGE = ["judge", "--task", "guide", "--models", "deepseek-r1", "--method", "rouge", "--no-progress"]
TOW = ["judge", "--task", "guide", "--models", "deepseek-r1", "--no-progress", "--judge-model", "m",
       "--judge-base-url", "http://127.0.0.1:9/v1", "--dry-run"]


def howtobench(args: list[str], tmp_path: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """The console entry point as a user runs it, in this process: (exit status, stderr's lines)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOWTOBENCH_DATA", str(bench_root))
    code, printed = console(args, monkeypatch, capsys)
    return code, [line for line in printed.err.splitlines() if line.strip()]


def test_a_workspace_that_is_a_file_is_named_as_such(tmp_path: Path, bench_root: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    for given, what in (("notes.txt", "is a file"), ("notes.txt/ws", "lies under notes.txt, a file")):
        code, err = howtobench([*JUDGE, "--limit", "1", "--workspace", given, "-o", "j.jsonl"], tmp_path, bench_root,
                               monkeypatch, capsys)
        assert code == 2 and len(err) == 1, err
        assert err[0] == (f"error: workspace {given} {what}, not a folder: the workspace is a folder (it holds the "
                          "call cache and batch state); give --workspace a folder, new or existing")
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_a_subset_larger_than_the_selection_is_refused(tmp_path: Path, bench_root: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, err = howtobench([*JUDGE, "--subset", "99999", "--workspace", "ws", "-o", "j.jsonl"], tmp_path, bench_root,
                           monkeypatch, capsys)
    assert code == 2 and len(err) == 1, err
    found = re.fullmatch(r"error: --subset 99999: the selection holds only ([\d,]+) items; give at most ([\d,]+) "
                         r"\(or leave --subset out to take them all\)", err[0])
    assert found is not None, err[0]
    guide = len(load_items(bench_root, ("guide",)))
    assert found.group(1) == found.group(2) == f"{guide:,}"
    assert not (tmp_path / "j.jsonl").exists()


def test_a_panel_judge_entry_with_an_unknown_key_is_refused_naming_it(tmp_path: Path, bench_root: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    panel = tmp_path / "panel.yaml"
    panel.write_text("judges:\n  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: m, temprature: 0.2}\n"
                     "  - {name: b, base_url: 'http://127.0.0.1:9/v1', model: m, concurency: 4}\n", encoding="utf-8")
    judge = ["judge", "--task", "guide", "--limit", "1", "--models", "deepseek-r1", "--no-progress", "--panel",
             str(panel), "--workspace", "ws", "-o", "j.jsonl"]
    code, err = howtobench(judge, tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: {panel}: judge a: unknown key 'temprature'; known: name, provider, base_url")
    panel.write_text(panel.read_text().replace(", temprature: 0.2", ""), encoding="utf-8")
    code, err = howtobench(judge, tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: {panel}: judge b: unknown key 'concurency' (did you mean 'concurrency'?)")


def test_a_panel_file_that_is_not_utf8_is_one_line_naming_file_and_line(tmp_path: Path, bench_root: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    panel = tmp_path / "panel.yaml"
    panel.write_bytes(b"judges:\n  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: m}\n  # \xff\xfe\n")
    code, err = howtobench(["judge", "--task", "guide", "--limit", "1", "--no-progress", "--panel", str(panel),
                            "--workspace", "ws", "-o", "j.jsonl"], tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and err == [f"error: panel file {panel}:3: not UTF-8 text (byte 0xff); save it as UTF-8"]


@pytest.mark.parametrize(("entry", "said"), [
    ("concurrency: yes", "judges.0.endpoint.concurrency: Value error, must be a number, not true"),
    ("timeout: .nan", "judges.0.endpoint.timeout_s: Input should be less than or equal to 86400"),
    ("rpm: .inf", "judges.0.endpoint.rpm: Input should be a finite number"),
])
def test_a_panel_judge_number_that_is_a_boolean_nan_or_infinite_is_refused(
        entry: str, said: str, tmp_path: Path, bench_root: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    panel = tmp_path / "panel.yaml"
    panel.write_text(f"judges:\n  - {{name: a, base_url: 'http://127.0.0.1:9/v1', model: m, {entry}}}\n"
                     "  - {name: b, base_url: 'http://127.0.0.1:9/v1', model: m}\n", encoding="utf-8")
    code, err = howtobench(["judge", "--task", "guide", "--limit", "1", "--no-progress", "--panel", str(panel),
                            "--workspace", "ws", "-o", "j.jsonl"], tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: panel file {panel}: {said}"), err[0]


@pytest.mark.parametrize(("text", "said"), [
    ("judge:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  concurrency: yes\n",
     "concurrency under judge: must be a number, not true"),
    ("seed: true\n", "seed must be a number, not true"),
])
def test_a_config_number_that_is_a_boolean_is_refused(text: str, said: str, tmp_path: Path, bench_root: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A settings file's `concurrency: yes` was one call at once (click read the boolean as 1)."""
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    code, err = howtobench([*JUDGE, "--limit", "1", "--config", str(config), "--workspace", "ws", "-o", "j.jsonl"],
                           tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and err == [f"error: {config}: {said}"], err


@pytest.mark.parametrize(("flag", "said"), [
    ("--panel", "error: panel file {path}: nested deeper than 32 levels"),
    ("--config", "error: config file {path}: nested deeper than 32 levels"),
    ("--prices", "error: bad price table {path}: nested deeper than 32 levels"),
])
def test_a_settings_file_nested_100000_deep_is_one_line(flag: str, said: str, tmp_path: Path, bench_root: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """It was a RecursionError traceback."""
    path = tmp_path / "deep.yaml"
    path.write_text("judges: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    args = [*TOW, "--limit", "1", flag, str(path), "--workspace", "ws", "-o", "j.jsonl"]
    if flag == "--panel":  # a panel instead of the one judge
        args = [a for a in args if a not in ("--judge-model", "m", "--judge-base-url", "http://127.0.0.1:9/v1")]
    code, err = howtobench(args, tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and err == [said.format(path=path)], err


@pytest.mark.parametrize(("entry", "said"), [
    ("m: {input: .nan, output: 1}", "m: input: Input should be a finite number"),
    ("m: {input: yes, output: 1}", "m: input: Value error, must be a number, not true"),
    ("m: {input: 1, output: -2}", "m: output: Input should be greater than or equal to 0"),
])
def test_a_price_that_is_nan_a_boolean_or_negative_is_refused(entry: str, said: str, tmp_path: Path,
                                                              bench_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A NaN price made every cost NaN, which never reaches --max-cost."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(entry + "\n", encoding="utf-8")
    code, err = howtobench([*TOW, "--limit", "1", "--prices", str(prices), "--workspace", "ws", "-o", "j.jsonl"],
                           tmp_path, bench_root, monkeypatch, capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: bad price table {prices}: {said}"), err
