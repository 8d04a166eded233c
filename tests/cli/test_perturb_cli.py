"""`howtobench perturb` reads the benchmark like every other command: --data, else $HOWTOBENCH_DATA (it used to
ignore the variable, so `--kind reference` failed and pad used the bundled filler), and --no-progress draws no bar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, script
from howtobench.cli.main import app
from howtobench.data.loader import load_items
from howtobench.errors import DataError


def two_writings(bench_root: Path, path: Path) -> Path:
    """The first two writings of one shipped model on the open task, as a user's writings file."""
    source = bench_root / "open" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    rows = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()][:2]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_perturb_reads_the_benchmark_from_howtobench_data(bench_root: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOWTOBENCH_DATA", str(bench_root))
    monkeypatch.chdir(tmp_path)
    writings = two_writings(bench_root, tmp_path / "w.jsonl")
    result = CliRunner().invoke(app, ["perturb", "w.jsonl", "--kind", "reference", "-o", "p.jsonl", "--no-progress"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.output == "reference: wrote 2 perturbed writings to p.jsonl\n"
    written = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    references = {it.id: it.reference for it in load_items(bench_root, ["open"])}
    ids = [json.loads(line)["infer_id"] for line in writings.read_text(encoding="utf-8").splitlines()]
    assert [(w["infer_id"], w["output"]) for w in written] == [(i, references[i]) for i in ids]


def test_perturb_stops_when_howtobench_data_holds_no_benchmark(bench_root: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "not-a-benchmark"
    empty.mkdir()
    monkeypatch.setenv("HOWTOBENCH_DATA", str(empty))
    writings = two_writings(bench_root, tmp_path / "w.jsonl")
    result = CliRunner().invoke(app, ["perturb", str(writings), "--kind", "drop", "-o", str(tmp_path / "p.jsonl")])
    assert isinstance(result.exception, DataError) and result.exception.exit_status == 2
    assert str(result.exception) == (f"no benchmark under {empty} (no <task>/aligned.jsonl): pass --data DIR, set "
                                     "HOWTOBENCH_DATA, or run `howtobench data download`")
    assert not (tmp_path / "p.jsonl").exists()


def test_perturb_data_flag_is_the_shared_one() -> None:
    """One --data option for every command: the same help, naming $HOWTOBENCH_DATA as the default."""
    import typer

    command = typer.main.get_command(app).commands["perturb"]  # type: ignore[attr-defined]
    judge = typer.main.get_command(app).commands["judge"]  # type: ignore[attr-defined]

    def data_help(cmd: object) -> str:
        return next(p.help for p in cmd.params if "--data" in p.opts)  # type: ignore[attr-defined]

    assert data_help(command) == data_help(judge) and "$HOWTOBENCH_DATA" in data_help(command)


def test_perturb_with_nothing_to_perturb_is_an_error_not_wrote_0(bench_root: Path, tmp_path: Path) -> None:
    """Every row skipped (items the benchmark does not hold), or an empty file: exit 2, not "wrote 0 ..." and 0."""
    strangers = tmp_path / "strangers.jsonl"
    strangers.write_text(json.dumps({"infer_id": "no-such-item", "model": "m", "output": "文"}) + "\n",
                         encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    for source, said in ((strangers, f"{strangers} holds no writing to perturb: every row was skipped (see above)"),
                         (empty, f"{empty} holds no rows")):
        result = CliRunner().invoke(app, ["perturb", str(source), "--kind", "drop", "--data", str(bench_root),
                                          "-o", str(tmp_path / "p.jsonl"), "--no-progress"])
        assert isinstance(result.exception, DataError) and result.exception.exit_status == 2, result.output
        assert str(result.exception) == said
        assert "wrote" not in result.output


def test_perturb_exits_3_when_rewrites_failed(bench_root: Path, tmp_path: Path) -> None:
    """A failed rewrite is recorded beside the output and the exit status says failures remain, like judge."""
    writings = two_writings(bench_root, tmp_path / "w.jsonl")
    out = tmp_path / "p.jsonl"
    with FakeServer(script(Reply.text("信一"), Reply.error(400, "context_length_exceeded"))) as server:
        result = CliRunner().invoke(app, [
            "perturb", str(writings), "--kind", "transfer-letter", "--data", str(bench_root), "-o", str(out),
            "--base-url", server.base_url, "--model", "m", "--workspace", str(tmp_path / "ws"), "--yes",
            "--no-progress", "--no-preflight"])
    assert result.exit_code == 3, (result.output, result.exception)
    assert f"transfer-letter: wrote 1 perturbed writings to {out}" in "".join(result.output.split("\n"))
    assert (f"1 of 2 perturbations failed (writing-level, recorded with the raw reply); recorded in "
            f"{tmp_path / 'p.failures.jsonl'}; re-running the same command tries them again") in " ".join(
        result.output.split())
