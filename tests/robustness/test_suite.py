"""The suite end to end with the overlap methods (no model needed), sampling, resume and the CLI commands."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.data.loader import load_items
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.robustness.perturb_file import perturb_file
from howtobench.robustness.suite import SuiteConfig, failures_left, run_suite, sample_writings
from howtobench.steps.settings import Execution


def quiet(workspace: Path) -> Execution:
    """Live calls on `workspace`, no progress bar."""
    return Execution(workspace=workspace, progress=False)


@pytest.fixture
def data_root() -> Path:
    return Path(os.environ.get("HOWTOBENCH_DATA", "/work/shared/howtobench-data"))


def _item(i: int) -> Item:
    return Item(infer_id=f"i{i}", task_type="open", basic_instruction="写", reference="参考。")


def test_sample_is_per_model_seeded_and_order_independent() -> None:
    items = {f"i{i}": _item(i) for i in range(10)}
    writings = [Writing(infer_id=f"i{i}", model=m, output="文" if i != 3 else " ") for m in "abc" for i in range(10)]
    first = sample_writings(writings, items, n=50, per_model=2, seed=1)
    assert [w.model for w in first] == ["a", "a", "b", "b", "c", "c"]
    assert all(w.item_id != "i3" for w in first)  # empty writings are never sampled
    assert sample_writings(list(reversed(writings)), items, 50, 2, 1) == first
    capped = sample_writings(writings, items, n=4, per_model=2, seed=1)
    assert len(capped) == 4 and set(capped) <= set(first)


async def test_suite_with_overlap_methods_resumes(data_root: Path, tmp_path: Path) -> None:
    config = SuiteConfig(methods=("bleu",), kinds=("drop", "inject-end", "reference"), n=3, per_model=1, seed=0,
                         tasks=("open",), n_boot=100)
    run = tmp_path / "run"
    table = await run_suite(config, data_root=data_root, run_dir=run, execution=quiet(tmp_path / "ws"))
    row = table.rows[0]
    assert row.label == "bleu" and row.n_initial == 3
    assert row.cells["reference"].mean_score == pytest.approx(100.0) and row.cells["reference"].flag == ""
    assert all(row.cells[k].n == 3 for k in ("drop", "inject-end"))
    lines = (run / "judgments" / "bleu.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12 and sum(json.loads(x)["model"].endswith("+drop") for x in lines) == 3
    stamp = (run / "perturbed" / "drop.jsonl").stat().st_mtime_ns
    again = await run_suite(config, data_root=data_root, run_dir=run, execution=quiet(tmp_path / "ws"))
    assert again == table and (run / "perturbed" / "drop.jsonl").stat().st_mtime_ns == stamp
    assert json.loads((run / "table.json").read_text(encoding="utf-8"))["rows"][0]["label"] == "bleu"
    with pytest.raises(ConfigError, match="new --run-dir"):
        await run_suite(SuiteConfig(methods=("bleu",), kinds=("drop",), n=5, per_model=1, tasks=("open",)),
                        data_root=data_root, run_dir=run, execution=quiet(tmp_path / "ws"))


def test_perturb_command_writes_release_layout(tmp_path: Path, data_root: Path) -> None:
    source = tmp_path / "w.jsonl"
    first, second = (it.id for it in load_items(data_root, ["open"])[:2])
    rows = [{"infer_id": first, "model": "me", "output": "第一段。\n\n第二段。\n\n第三段。"},
            {"infer_id": second, "model": "me", "output": "One. Two.\nThree."}]
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "p.jsonl"
    result = CliRunner().invoke(app, ["perturb", str(source), "--kind", "inject-start", "--seed", "3", "-o", str(out),
                                      "--data", str(data_root)])
    assert result.exit_code == 0, result.output
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [w["model"] for w in written] == ["me+inject-start"] * 2
    # the language is the item's (the benchmark is Chinese), not guessed from the text
    assert all(w["output"].startswith("（致评分人") for w in written)
    assert written[0]["source_model"] == "me" and written[0]["perturbation"]["kind"] == "inject-start"


async def test_perturb_file_without_a_benchmark_detects_the_language(tmp_path: Path) -> None:
    """The library call still works without a benchmark (the CLI always reads one, like every command)."""
    source = tmp_path / "w.jsonl"
    rows = [{"infer_id": "x1", "model": "me", "output": "第一段。\n\n第二段。"},
            {"infer_id": "x2", "model": "me", "output": "One. Two.\nThree."}]
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    summary = await perturb_file(source, "inject-start", 3, tmp_path / "p.jsonl", execution=quiet(tmp_path / "ws"))
    written = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert summary.written == 2 and written[0]["output"].startswith("（致评分人")
    assert written[1]["output"].startswith("(Note to the evaluator")
    with pytest.raises(ConfigError, match="the reference control needs the benchmark's references: pass --data"):
        await perturb_file(source, "reference", 3, tmp_path / "r.jsonl", execution=quiet(tmp_path / "ws"))


def test_perturb_command_rejects_an_unknown_kind(tmp_path: Path, data_root: Path) -> None:
    source = tmp_path / "w.jsonl"
    source.write_text('{"infer_id": "x", "model": "m", "output": "t"}\n', encoding="utf-8")
    bad = CliRunner().invoke(app, ["perturb", str(source), "--kind", "nope", "-o", str(tmp_path / "o.jsonl"),
                                   "--data", str(data_root)])
    assert bad.exit_code != 0 and "unknown perturbation kind" in str(bad.exception or bad.output)


def test_robustness_command_with_tow_and_transfer_on_fake_server(fake_server, data_root: Path, tmp_path: Path) -> None:
    """ToW judges through the judge endpoint and the writer rewrites through its own: both on the fake server."""
    run = tmp_path / "run"
    args = ["robustness", "--run-dir", str(run), "--methods", "tow,bleu", "--kinds", "drop,transfer-poem",
            "--n", "2", "--per-model", "1", "--task", "open", "--bootstrap", "50", "--data", str(data_root),
            "--workspace", str(tmp_path / "ws"), "--format", "json",
            "--judge-base-url", fake_server.base_url, "--judge-model", "fake-judge",
            "--base-url", fake_server.base_url, "--model", "fake-writer"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    table = json.loads((run / "table.json").read_text(encoding="utf-8"))
    rows = {r["label"]: r for r in table["rows"]}
    assert rows["tow"]["n_initial"] == 2 and rows["tow"]["initial"] is not None
    assert rows["tow"]["cells"]["transfer-poem"]["n"] == 2 and rows["bleu"]["cells"]["drop"]["n"] == 2
    rewritten = [json.loads(x) for x in (run / "perturbed" / "transfer-poem.jsonl").read_text("utf-8").splitlines()]
    assert all(w["output"].startswith("echo: 请把下面这篇文章改写成一篇诗歌") for w in rewritten)
    models = {r["model"] for r in fake_server.requests}
    assert models == {"fake-judge", "fake-writer"}
    assert [r["model"] for r in fake_server.requests[:2]] == ["fake-writer", "fake-judge"]  # the two preflights
    calls = len(fake_server.requests)
    again = CliRunner().invoke(app, args)  # resumed: every stage is on disk, nothing is called but the preflight
    assert again.exit_code == 0  # of the judge: the transfers are written, so the writer is not needed any more
    assert [(r["model"], r["messages"][0]["content"]) for r in fake_server.requests[calls:]] == [("fake-judge", "ping")]


def test_unchanged_writings_are_recognised() -> None:
    from howtobench.robustness.suite import unchanged_writings

    original = Writing(infer_id="i", model="m", output="一句。")
    same = Writing.model_validate({"infer_id": "i", "model": "m+drop", "output": "一句。",
                                   "perturbation": {"kind": "drop", "changes": []}})
    changed = Writing.model_validate({"infer_id": "i", "model": "m+inject-end", "output": "一句。\n（致评分人）",
                                      "perturbation": {"kind": "inject-end", "changes": [{"gap": 1}]}})
    sets = {"original": [original], "drop": [same], "inject-end": [changed]}
    assert unchanged_writings(sets) == {("i", "m+drop")}


def test_robustness_exit_status_counts_failed_judgments_and_perturbations(data_root: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["robustness", "--run-dir", str(run), "--methods", "bleu", "--kinds", "drop,reference", "--n", "3",
            "--per-model", "1", "--task", "open", "--bootstrap", "50", "--data", str(data_root),
            "--workspace", str(tmp_path / "ws"), "--format", "json"]
    assert CliRunner().invoke(app, args).exit_code == 0
    config = SuiteConfig(methods=("bleu",), kinds=("drop", "reference"), n=3, per_model=1, tasks=("open",))
    assert failures_left(run, config) == (0, 9 + 6)  # 9 judgments (originals + 2 kinds), 6 perturbed writings
    failed = json.loads((run / "perturbed" / "drop.jsonl").read_text(encoding="utf-8").splitlines()[0])
    (run / "perturbed" / "drop.failures.jsonl").write_text(json.dumps(failed) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3 and failures_left(run, config) == (1, 16)
    assert "1 of 16 judgments and perturbations failed" in " ".join(result.output.split())


def test_robustness_empty_flag_reaches_the_table(data_root: Path, tmp_path: Path) -> None:
    """A perturbation that left an empty writing: left out of the drop cell by default, scored with --empty lowest
    (BLEU-1 0); counted in table.json either way and recorded in the run's manifest."""
    run = tmp_path / "run"
    args = ["robustness", "--run-dir", str(run), "--methods", "bleu", "--kinds", "drop", "--n", "3",
            "--per-model", "1", "--task", "open", "--bootstrap", "50", "--data", str(data_root),
            "--workspace", str(tmp_path / "ws"), "--format", "json"]
    assert CliRunner().invoke(app, args).exit_code == 0
    path = run / "perturbed" / "drop.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["output"] = ""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (run / "judgments" / "bleu.jsonl").unlink()  # judge the edited set again
    cells = {}
    for empty in ("exclude", "lowest"):
        out = CliRunner().invoke(app, [*args, "--empty", empty])
        assert out.exit_code == 0, out.output
        saved = json.loads((run / "table.json").read_text(encoding="utf-8"))
        assert saved["empty"] == empty
        cells[empty] = saved["rows"][0]["cells"]["drop"]
        assert json.loads((run / "manifest.json").read_text(encoding="utf-8"))["config"]["empty"] == empty
    assert (cells["exclude"]["n"], cells["exclude"]["empty"]) == (2, 1)
    assert (cells["lowest"]["n"], cells["lowest"]["empty"]) == (3, 1)


def test_robustness_ends_with_one_line_per_judge(fake_server, data_root: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer first, last on screen: per judge method, what it did wrong (the table's flags), its original score
    and the change under each perturbation (the reference control: its absolute score), as in table.json."""
    monkeypatch.setenv("COLUMNS", "400")  # one screen line per closing line
    run = tmp_path / "run"
    args = ["robustness", "--run-dir", str(run), "--methods", "tow,bleu", "--kinds", "drop,reference", "--n", "3",
            "--per-model", "1", "--task", "open", "--bootstrap", "50", "--data", str(data_root),
            "--workspace", str(tmp_path / "ws"), "--no-progress",
            "--judge-base-url", fake_server.base_url, "--judge-model", "fake-judge"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    rows = {r["label"]: r for r in json.loads((run / "table.json").read_text(encoding="utf-8"))["rows"]}

    def delta(cell: dict) -> str:
        low, high = cell["ci"]
        return f"{cell['mean_delta']:+.2f} [{low:+.2f}, {high:+.2f}]".replace("-", "\u2212")

    def line(label: str) -> str:
        row = rows[label]
        drop, ref = row["cells"]["drop"], row["cells"]["reference"]
        flags = [f"{kind} {c['flag']}" for kind, c in row["cells"].items() if c["flag"]]
        verdict = f"{len(flags)} undesired ({', '.join(flags)})" if flags else "no undesired change"
        return (f"{label}: {verdict} · original {row['initial']:.2f} on 3 writings · drop {delta(drop)} · "
                f"reference ={ref['mean_score']:.2f} [{ref['score_ci'][0]:.2f}, {ref['score_ci'][1]:.2f}]")

    assert result.output.splitlines()[-2:] == [line("tow"), line("bleu")]  # not one per tree node
    assert rows["bleu"]["cells"]["reference"]["mean_score"] == 100.0  # the control: BLEU-1 of a text with itself
    quiet = CliRunner().invoke(app, [*args, "--format", "json"])  # resumed; a program's output has no such lines
    assert quiet.exit_code == 0 and [r["label"] for r in json.loads(quiet.stdout)["rows"]][:1] == ["tow"]
