"""`howtobench judge` with the baselines: overlap metrics without a model, LLM baselines with samples, average."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fake_server import FakeServer, Reply
from howtobench.cli.main import app
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


def test_average_from_tow_file(tmp_path: Path, bench_root: Path) -> None:
    first = json.loads((bench_root / "completion" / "aligned.jsonl").open(encoding="utf-8").readline())
    scores = {"opening_ending": 9, "language": 6, "logic": 7, "emotion": 4, "impression": 6}
    stored = Judgment(method="tow", item_id=first["infer_id"], model=MODELS[0], task="completion", genre="x",
                      score=6.0, leaves=[LeafResult(name=k, score=v) for k, v in scores.items()],
                      tree_hash=default_tree().hash)
    tow = tmp_path / "tow.jsonl"
    tow.write_text(stored.model_dump_json() + "\n", encoding="utf-8")
    rows = judge(bench_root, tmp_path / "average.jsonl", "--method", "average", "--from", str(tow), status=3)
    by_key = {(r["item_id"], r["model"]): r for r in rows}
    assert by_key[(first["infer_id"], MODELS[0])]["score"] == sum(scores.values()) / 5
    assert sum(r["status"] == "failed" for r in rows) == 3  # no stored ToW judgment for the others
