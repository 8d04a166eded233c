"""`howtobench judge` with the baselines: overlap metrics without a model, LLM baselines with samples, average."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fake_server import FakeServer, Reply
from howtobench.cli.main import app
from howtobench.errors import JudgeError
from howtobench.judges.base import Judgment, LeafResult
from howtobench.judges.tree import default_tree

MODELS = ["gpt-4o-2024-11-20", "deepseek-chat"]


def judge(data: Path, out: Path, *extra: str, status: int = 0) -> list[dict]:
    args = ["judge", "--data", str(data), "--task", "completion", "--limit", "2", "-o", str(out), "--no-progress"]
    for model in MODELS:
        args += ["--models", model]
    result = CliRunner().invoke(app, args + list(extra))
    assert result.exit_code == status, result.output + repr(result.exception)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_overlap_methods_need_no_model_and_resume(tmp_path: Path, bench_root: Path) -> None:
    for method, scale in (("bleu", 100), ("rouge", 1), ("sacrebleu", 100)):
        out = tmp_path / f"{method}.jsonl"
        rows = judge(bench_root, out, "--method", method)
        assert len(rows) == 4 and {r["method"] for r in rows} == {method}
        assert all(r["status"] == "ok" and 0 < r["score"] <= scale and r["usage"]["calls"] == 0 for r in rows)
        assert len(judge(bench_root, out, "--method", method)) == 4  # resumed: no line appended


def test_llm_baseline_with_samples(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = lambda req: Reply.json({"reason": "r", "score": 3 + req["seed"]})
    rows = judge(bench_root, tmp_path / "single.jsonl", "--method", "single", "--samples", "3", "--judge-base-url",
                 fake_server.base_url, "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"),
                 "--no-preflight")
    assert len(rows) == 4 and len(fake_server.requests) == 12
    assert all(r["score"] == 4.0 and [s["score"] for s in r["samples"]] == [3.0, 4.0, 5.0] for r in rows)


def stored_tow(tmp_path: Path, bench_root: Path) -> tuple[Path, str, dict[str, int]]:
    """A ToW file holding one judgment: the first Completion item by MODELS[0]."""
    first = json.loads((bench_root / "completion" / "aligned.jsonl").open(encoding="utf-8").readline())
    scores = {"opening_ending": 9, "language": 6, "logic": 7, "emotion": 4, "impression": 6}
    stored = Judgment(method="tow", item_id=first["infer_id"], model=MODELS[0], task="completion", genre="x",
                      score=6.0, leaves=[LeafResult(name=k, score=v) for k, v in scores.items()],
                      tree_hash=default_tree().hash)
    tow = tmp_path / "tow.jsonl"
    tow.write_text(stored.model_dump_json() + "\n", encoding="utf-8")
    return tow, first["infer_id"], scores


def test_average_from_tow_file(tmp_path: Path, bench_root: Path) -> None:
    tow, item_id, scores = stored_tow(tmp_path, bench_root)
    rows = judge(bench_root, tmp_path / "average.jsonl", "--method", "average", "--from", str(tow))
    # the three selected writings the ToW file lacks are outside the selection, not failures
    assert [(r["item_id"], r["model"], r["status"]) for r in rows] == [(item_id, MODELS[0], "ok")]
    assert rows[0]["score"] == sum(scores.values()) / 5


def test_average_without_filters_takes_the_from_file_writings(tmp_path: Path, bench_root: Path) -> None:
    """The README's `judge --method average --from TOW.jsonl -o AVG.jsonl`: one row per stored ToW judgment
    (it used to "fail" the other 13,019 release writings and exit 3)."""
    tow, item_id, _ = stored_tow(tmp_path, bench_root)
    out = tmp_path / "avg.jsonl"
    result = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--method", "average", "--from", str(tow),
                                      "-o", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["item_id"], r["model"], r["status"]) for r in rows] == [(item_id, MODELS[0], "ok")]
    missing = CliRunner().invoke(app, ["judge", "--data", str(bench_root), "--method", "average", "--from",
                                       str(tmp_path / "nope.jsonl"), "-o", str(out), "--no-progress"])
    assert isinstance(missing.exception, JudgeError) and missing.exception.exit_status == 2  # main() prints one line
    assert "nope.jsonl: no such file" in str(missing.exception)


def test_the_call_log_names_a_judge_command_by_its_output(fake_server: FakeServer, tmp_path: Path,
                                                          bench_root: Path) -> None:
    """`llm usage` listed a judge command as '20261201T083944Z-ff988f'; now 'judge:<out>', one row across resumes."""
    from howtobench.llm.accounting import usage_from_log

    fake_server.handler = lambda req: Reply.json({"reason": "r", "score": 6})
    out = tmp_path / "single.jsonl"
    for limit in ("1", "2"):  # the second command resumes the first and judges one more item per model
        args = ["judge", "--data", str(bench_root), "--task", "completion", "--limit", limit, "--models", MODELS[0],
                "--method", "single", "-o", str(out), "--no-progress", "--judge-base-url", fake_server.base_url,
                "--judge-model", "fake-judge", "--workspace", str(tmp_path / "ws"), "--no-preflight"]
        assert CliRunner().invoke(app, args).exit_code == 0
    rows = usage_from_log(tmp_path / "ws")
    assert [(r.run_id, r.purpose, r.usage.calls) for r in rows] == [(f"judge:{out}", "baseline:single", 2)]
