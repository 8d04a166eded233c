"""Judge panels: the combination rule on hand-made judgments, the panel file, and `judge --panel` with two fake
judges on loopback (each judge runs the whole tree; the panel's score is the mean of their own roots)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply
from howtobench.cli.main import app
from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment, LeafResult
from howtobench.judges.panel import PanelSpec, combine, load_panel
from judge_replies import judge_reply, leaf_score, schema_of, server_handler, weights_for

MODELS = ["gpt-4o-2024-11-20", "deepseek-chat"]


def _member(score: float | None, status: str = "ok", content: float = 5.0, leaf: float = 6.0) -> Judgment:
    return Judgment(method="tow", item_id="i1", model="m", task="open", genre="prose", score=score,
                    status=status, nodes={"content": content}, judge_model="jm",  # type: ignore[arg-type]
                    leaves=[LeafResult(name="logic", node="content", score=leaf, reason="why")],
                    failures=[] if status != "failed" else ["BadResponse: no JSON"])


def spec(aggregate: str = "mean", missing: str = "fail", n: int = 3) -> PanelSpec:
    return PanelSpec.model_validate({
        "judges": [{"name": f"j{k}", "endpoint": {"base_url": "http://127.0.0.1:9", "model": f"m{k}"}}
                   for k in range(n)],
        "aggregate": aggregate, "missing": missing})


def test_mean_and_median_of_the_judges_roots_nodes_and_leaves() -> None:
    members = {"j0": _member(4.0, content=3.0, leaf=2.0), "j1": _member(5.0, content=4.0, leaf=4.0),
               "j2": _member(9.0, content=8.0, leaf=9.0)}
    mean = combine(spec(), members)
    assert (mean.score, mean.status, mean.nodes, mean.leaves[0].score) == (6.0, "ok", {"content": 5.0}, 5.0)
    assert mean.panel is not None and mean.panel.members["j2"].score == 9.0 and mean.panel.aggregate == "mean"
    assert mean.panel.members["j0"].leaves[0].reason == "why"
    median = combine(spec("median"), members)
    assert (median.score, median.nodes["content"], median.leaves[0].score) == (5.0, 4.0, 4.0)


def test_a_failing_judge_fails_the_panel_by_default() -> None:
    members = {"j0": _member(4.0), "j1": _member(None, "failed"), "j2": _member(8.0)}
    failed = combine(spec(), members)
    assert (failed.score, failed.status) == (None, "failed")
    assert failed.failures == ["judge j1: BadResponse: no JSON",
                               "panel rule (missing: fail): no panel score without every judge"]
    kept = combine(spec(missing="available"), members)
    assert (kept.score, kept.status) == (6.0, "renormalized")
    assert kept.failures[-1] == "panel score over 2 of 3 judges (missing: available)"
    assert kept.panel is not None and kept.panel.members["j1"].status == "failed"


def test_panel_file_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "panel.yaml"
    path.write_text("judges:\n  - {name: a, base_url: 'http://x/v1', model: m}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="a panel needs at least 2 judges, got 1"):
        load_panel(path)
    path.write_text("judges:\n  - {name: a, base_url: 'http://x/v1', model: m}\n"
                    "  - {name: a, base_url: 'http://y/v1', model: n}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="judge names must be unique"):
        load_panel(path)
    path.write_text("judges: [{name: a}, {name: b}]\nweights: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key 'weights'"):
        load_panel(path)
    path.write_text("judges:\n  - {name: a, base_url: 'http://x/v1', model: m, timeout: 5}\n"
                    "  - {name: b, base-url: 'http://y/v1', model: n}\naggregate: median\n", encoding="utf-8")
    loaded = load_panel(path)
    assert loaded.judges[0].endpoint.timeout_s == 5 and loaded.judges[1].endpoint.base_urls == ("http://y/v1",)


def test_a_panel_judge_names_a_provider_under_its_own_keys(tmp_path: Path) -> None:
    path = tmp_path / "panel.yaml"
    path.write_text("judges:\n  - {name: ds, provider: deepseek, model: deepseek-chat}\n"
                    "  - {name: gpu, provider: vllm, base-url: 'http://gpu:9000/v1', model: q, concurrency: 8}\n",
                    encoding="utf-8")
    ds, gpu = (judge.endpoint for judge in load_panel(path).judges)
    assert (ds.base_urls, ds.api_key_env, ds.response_format) == (("https://api.deepseek.com/v1",),
                                                                  "DEEPSEEK_API_KEY", "json_object")
    assert (gpu.base_urls, gpu.concurrency) == (("http://gpu:9000/v1",), 8)  # the entry's keys over the profile
    path.write_text("judges:\n  - {name: a, provider: opnai, model: m}\n  - {name: b, base_url: 'http://y/v1', "
                    "model: n}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"judge a: unknown provider 'opnai' \(did you mean 'openai'\?\)"):
        load_panel(path)


def shifted_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A second judge: the first judge's weights in reverse order per node (so its roots differ), its own reasons."""
    name, schema = schema_of(request)
    if name == "weights":
        return {k: dict(zip(v, reversed(list(v.values())), strict=True)) if isinstance(v, dict) else v
                for k, v in weights_for(schema).items()}
    reply = judge_reply(request)
    prompt = str(next(m["content"] for m in request["messages"] if m["role"] == "user"))
    leaf, _ = leaf_score(prompt)
    return {**reply, "analysis": f"{leaf}: judge b"}


def _panel_file(tmp_path: Path, a: FakeServer, b: FakeServer, missing: str = "fail") -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(f"judges:\n  - {{name: a, base_url: '{a.base_url}', model: judge-a}}\n"
                    f"  - {{name: b, base_url: '{b.base_url}', model: judge-b}}\n"
                    f"aggregate: mean\nmissing: {missing}\n", encoding="utf-8")
    return path


def _judge(tmp_path: Path, bench_root: Path, panel: Path, *extra: str) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path / "panel.jsonl"
    args = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "2", "--panel", str(panel),
            "--workspace", str(tmp_path / "ws"), "-o", str(out), "--no-progress", *extra]
    for model in MODELS:
        args += ["--models", model]
    result = CliRunner().invoke(app, args)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return result, rows


def test_panel_of_two_fake_judges_scores_the_mean_of_their_own_roots(tmp_path: Path, bench_root: Path) -> None:
    with FakeServer(server_handler()) as a, FakeServer(server_handler(shifted_reply)) as b:
        result, rows = _judge(tmp_path, bench_root, _panel_file(tmp_path, a, b))
        assert result.exit_code == 0, result.output
        assert len(rows) == 4
        for row in rows:
            members = row["panel"]["members"]
            assert list(members) == ["a", "b"]
            assert [members[n]["judge_model"] for n in ("a", "b")] == ["judge-a", "judge-b"]
            assert all(len(m["leaves"]) == 8 and m["weights"] for m in members.values())
            assert row["score"] == pytest.approx(statistics.fmean(m["score"] for m in members.values()))
            assert row["status"] == "ok" and row["writing_chars"] > 0 and row["reference_source"] == "human"
        # each judge ran its own weight plan: their weights differ, one negotiation per item per judge
        first = rows[0]["panel"]["members"]
        assert first["a"]["weights"] != first["b"]["weights"]
        assert any(r["panel"]["members"]["a"]["score"] != r["panel"]["members"]["b"]["score"] for r in rows)
        assert sum(schema_of(r)[0] == "weights" for r in a.requests) == 2
        assert sum(schema_of(r)[0] == "weights" for r in b.requests) == 2
        assert "judge a" in result.output and "judge b" in result.output  # money first: a lane per judge


def test_a_judge_failing_a_writing_is_recorded_and_the_rule_applied(tmp_path: Path, bench_root: Path) -> None:
    def broken(request: dict[str, Any]) -> Reply:
        return Reply.text("no JSON here") if schema_of(request)[0] != "weights" else server_handler()(request)

    with FakeServer(server_handler()) as a, FakeServer(broken) as b:
        result, rows = _judge(tmp_path, bench_root, _panel_file(tmp_path, a, b, missing="available"))
        assert result.exit_code == 0, result.output
        for row in rows:
            assert row["status"] == "renormalized"
            assert row["panel"]["members"]["b"]["score"] is None
            assert row["score"] == pytest.approx(row["panel"]["members"]["a"]["score"])
            assert row["failures"][-1] == "panel score over 1 of 2 judges (missing: available)"


def test_panel_and_a_single_judge_endpoint_are_exclusive(tmp_path: Path, bench_root: Path) -> None:
    with FakeServer(server_handler()) as a, FakeServer(server_handler()) as b:
        result, _ = _judge(tmp_path, bench_root, _panel_file(tmp_path, a, b), "--judge-base-url", a.base_url,
                           "--judge-model", "x")
    assert isinstance(result.exception, ConfigError)  # main() prints it as one line and exits 2
    assert "--panel names its judges' endpoints" in str(result.exception)


def test_api_ascore_with_a_panel(tmp_path: Path) -> None:
    import asyncio

    import howtobench

    with FakeServer(server_handler()) as a, FakeServer(server_handler(shifted_reply)) as b:
        panel = _panel_file(tmp_path, a, b)
        judgment = asyncio.run(howtobench.ascore("写一篇短文", "# 标题\n\n山高水长。", reference="范文：山高水长。",
                                                 panel=panel, workspace=tmp_path / "ws"))
    assert judgment.panel is not None and list(judgment.panel.members) == ["a", "b"]
    roots = [m.score for m in judgment.panel.members.values()]
    assert judgment.score == pytest.approx(statistics.fmean(roots))  # type: ignore[arg-type]
    assert (judgment.writing_chars, judgment.reference_chars) == (11, 8)
