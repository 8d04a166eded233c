"""`perturb_file` on a tiny benchmark: judgment-file input, references for the control, pool for pad; the output
written as each perturbation is made, so a stopped or killed run resumes without redoing (or paying for) any."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, script
from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError, HowtobenchError
from howtobench.judges.base import Judgment
from howtobench.robustness.perturb_file import perturb_file
from howtobench.steps.settings import Execution


def quiet(workspace: Path) -> Execution:
    """Live calls on `workspace`, no progress bar."""
    return Execution(workspace=workspace, progress=False)


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def tiny_bench(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    items = [{"infer_id": f"infer_{k}", "bench_id": f"b{k}", "task_type": "open", "sub_task": "议论文",
              "basic_instruction": "写一篇文章", "information": "", "reference": f"参考范文{k}。第二句{k}。"}
             for k in range(3)]
    _jsonl(root / "open" / "aligned.jsonl", items)
    writings = [{"infer_id": f"infer_{k}", "task_type": "open", "model": "m", "output": f"第一段{k}。\n\n第二段{k}。"}
                for k in range(3)]
    _jsonl(root / "open" / "inferences" / "m.jsonl", writings)
    return root


async def test_judgment_file_input_and_reference_control(tiny_bench: Path, tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    rows = [Judgment(method="bleu", item_id=f"infer_{k}", model="m", task="open", genre="argumentative", score=1.0)
            for k in (2, 0)]
    judged.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    out = tmp_path / "ref.jsonl"
    summary = await perturb_file(judged, "reference", 0, out, data_root=tiny_bench, execution=quiet(tmp_path / "ws"))
    assert (summary.written, summary.failed) == (2, 0)
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(w["infer_id"], w["model"], w["output"]) for w in written] == [
        ("infer_2", "m+reference", "参考范文2。第二句2。"), ("infer_0", "m+reference", "参考范文0。第二句0。")]
    with pytest.raises(ConfigError, match="--data"):
        await perturb_file(judged, "drop", 0, out, execution=quiet(tmp_path / "ws"))


async def test_pad_takes_filler_from_other_items_references(tiny_bench: Path, tmp_path: Path) -> None:
    source = tiny_bench / "open" / "inferences" / "m.jsonl"
    out = tmp_path / "pad.jsonl"
    await perturb_file(source, "pad", 4, out, data_root=tiny_bench, execution=quiet(tmp_path / "ws"))
    for row in map(json.loads, out.read_text(encoding="utf-8").splitlines()):
        change = row["perturbation"]["changes"][0]
        assert change["pool"] == "given"
        own = row["infer_id"].removeprefix("infer_")
        filler = row["output"].split("\n\n")[2:]
        assert filler and all("参考范文" in f or "第二句" in f for f in filler)
        assert all(f"范文{own}" not in f and f"第二句{own}" not in f for f in filler)  # never the item's own reference


def _writings(path: Path, n: int) -> Path:
    _jsonl(path, [{"infer_id": f"infer_{k}", "model": "m", "output": f"第一段{k}。\n\n第二段{k}。"} for k in range(n)])
    return path


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _writer(server: FakeServer) -> EndpointConfig:
    return EndpointConfig(model="fake", base_urls=(server.base_url,), concurrency=1, max_retries=0, reasks=0,
                          timeout_s=5)


async def test_a_stopped_run_keeps_its_finished_rows_and_a_rerun_sends_only_the_rest(fake_server: FakeServer,
                                                                                    tmp_path: Path) -> None:
    """Two rewrites come back, then the key is refused (a run-level error stops the run): the two are in the
    output already. A re-run in a fresh workspace (nothing cached) sends the third writing alone."""
    source, out = _writings(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    fake_server.handler = script(Reply.text("信一"), Reply.text("信二"), Reply.error(401, "bad key"))
    with pytest.raises(HowtobenchError, match="401"):
        await perturb_file(source, "transfer-letter", 0, out, endpoint=_writer(fake_server),
                           execution=quiet(tmp_path / "ws1"))
    assert [(r["infer_id"], r["output"]) for r in _rows(out)] == [("infer_0", "信一"), ("infer_1", "信二")]
    assert len(fake_server.requests) == 3
    fake_server.handler = script(Reply.text("信三"))
    summary = await perturb_file(source, "transfer-letter", 0, out, endpoint=_writer(fake_server),
                                 execution=quiet(tmp_path / "ws2"))
    assert (summary.written, summary.kept, summary.failed) == (1, 2, 0)
    assert summary.wrote_line == f"transfer-letter: wrote 1 perturbed writings to {out} (2 already there from an " \
                                 "earlier run)"
    assert len(fake_server.requests) == 4 and "第一段2" in fake_server.requests[3]["messages"][-1]["content"]
    assert [(r["infer_id"], r["model"], r["output"]) for r in _rows(out)] == [
        ("infer_0", "m+transfer-letter", "信一"), ("infer_1", "m+transfer-letter", "信二"),
        ("infer_2", "m+transfer-letter", "信三")]
    again = await perturb_file(source, "transfer-letter", 0, out, endpoint=_writer(fake_server),
                               execution=quiet(tmp_path / "ws3"))
    assert (again.written, again.kept) == (0, 3) and len(fake_server.requests) == 4 and len(_rows(out)) == 3


async def test_failures_go_beside_the_output_and_are_tried_again_by_the_next_run(fake_server: FakeServer,
                                                                                 tmp_path: Path) -> None:
    source, out = _writings(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    fake_server.handler = script(Reply.text("信一"), Reply.error(400, "context_length_exceeded"))  # a failed rewrite
    first = await perturb_file(source, "transfer-letter", 0, out, endpoint=_writer(fake_server),
                               execution=quiet(tmp_path / "ws"))
    assert (first.written, first.failed, first.failures_out) == (1, 1, tmp_path / "out.failures.jsonl")
    assert [r["infer_id"] for r in _rows(out)] == ["infer_0"]
    assert [r["infer_id"] for r in _rows(tmp_path / "out.failures.jsonl")] == ["infer_1"]
    fake_server.handler = script(Reply.text("信二"))
    second = await perturb_file(source, "transfer-letter", 0, out, endpoint=_writer(fake_server),
                                execution=quiet(tmp_path / "ws"))
    assert (second.written, second.kept, second.failed, second.failures_out) == (1, 1, 0, None)
    assert [r["output"] for r in _rows(out)] == ["信一", "信二"] and len(fake_server.requests) == 3
    assert not (tmp_path / "out.failures.jsonl").exists()


async def test_a_line_cut_by_a_kill_is_redone_and_another_kind_or_seed_is_refused(tmp_path: Path) -> None:
    source, out = _writings(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    await perturb_file(source, "shuffle", 5, out, execution=quiet(tmp_path / "ws"))
    whole = out.read_text(encoding="utf-8")
    lines = whole.splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][:25], encoding="utf-8")  # killed while writing the second line
    summary = await perturb_file(source, "shuffle", 5, out, execution=quiet(tmp_path / "ws"))
    assert (summary.written, summary.kept) == (2, 1)
    assert sorted(out.read_text(encoding="utf-8").splitlines(keepends=True)) == sorted(lines)  # same rows, each once
    with pytest.raises(ConfigError, match=r"out\.jsonl:1 holds a writing perturbed with --kind shuffle --seed 5, "
                                          r"not --kind shuffle --seed 6"):
        await perturb_file(source, "shuffle", 6, out, execution=quiet(tmp_path / "ws"))
    with pytest.raises(ConfigError, match="not --kind drop --seed 5"):
        await perturb_file(source, "drop", 5, out, execution=quiet(tmp_path / "ws"))


def test_the_command_says_what_an_earlier_run_left(tiny_bench: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["perturb", str(_writings(tmp_path / "in.jsonl", 3)), "--kind", "drop", "-o", "p.jsonl", "--data",
            str(tiny_bench), "--no-progress"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0 and first.output == "drop: wrote 3 perturbed writings to p.jsonl\n"
    lines = (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "p.jsonl").write_text(lines[0], encoding="utf-8")  # as if stopped after the first
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0
    assert " ".join(again.output.split()) == \
        "drop: wrote 2 perturbed writings to p.jsonl (1 already there from an earlier run)"
    assert sorted((tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)) == sorted(lines)


async def test_the_bar_counts_written_and_failed_like_the_judge_and_generate_bars(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """perturb had a bare bar (no counters, nothing drawn without a terminal until the end); it runs on the step
    layer's loop now, whose bar is a line on stderr without a terminal, with the stats the sink keeps."""
    source, out = _writings(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    summary = await perturb_file(source, "shuffle", 5, out, execution=Execution(workspace=tmp_path / "ws"))
    assert (summary.written, summary.failed) == (3, 0)
    printed = " ".join(capsys.readouterr().err.split())  # the line wraps at the log's width
    assert "perturb · shuffle: 3/3 (100%) · written 3 · failed 0 · " in printed
