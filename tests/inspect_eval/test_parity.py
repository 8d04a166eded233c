"""inspect and `howtobench judge` agree: the same judge replies (our fake server, reached through inspect's
OpenAI-compatible provider) give the same prompts, leaves, weights, roots and leaderboard means. And the
command a user types, `inspect eval howtobench/howtobench ...`, finds the task through the entry point."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra installs inspect_ai")

from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model
from inspect_fakes import mock_writer, server_handler

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.inspect_eval.metrics import leaderboard_means
from howtobench.inspect_eval.task import howtobench
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Execution, Selection

TASKS = ("completion", "guide")


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer(server_handler()) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "sk-test-not-a-secret")
        yield server


def messages_sent(server: FakeServer) -> set[str]:
    """Each judge prompt received (roles and contents), whatever else the client put in the body."""
    return {json.dumps([(m["role"], m["content"]) for m in r["messages"]], ensure_ascii=False)
            for r in server.requests if r.get("response_format")}


async def test_inspect_and_howtobench_judge_give_the_same_judgments(
        judge_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    task = howtobench(task=",".join(TASKS), limit=2, data=str(bench_root))
    judge = get_model("openai-api/fake/fake-judge")
    [log] = await _eval_async(task, judge, tmp_path)
    assert log.status == "success" and log.samples is not None and len(log.samples) == 4
    via_inspect = messages_sent(judge_server)
    # guide: 7 leaf calls (formatting is the heading parser), completion: 5 (no format node); 1 weights call per item
    assert len(judge_server.requests) == 2 * 7 + 2 * 5 + 4

    writings = tmp_path / "writings.jsonl"
    writings.write_text("".join(json.dumps({"infer_id": s.id, "model": "writer", "output": s.output.completion},
                                           ensure_ascii=False) + "\n" for s in log.samples), encoding="utf-8")
    judge_server.reset()
    job = JudgeJob(Selection(data_dir=bench_root, tasks=TASKS, limit=2, writings=(writings,)),
                   Execution(workspace=tmp_path / "ws", progress=False), tmp_path / "tow.jsonl",
                   endpoint=EndpointConfig(model="fake-judge", base_urls=(judge_server.base_url,)))
    judgments = {j.item_id: j for j in await judge_job(job)}
    assert messages_sent(judge_server) == via_inspect  # byte-identical prompts on both paths

    for sample in log.samples:
        score, ours = sample.scores["tow"], judgments[str(sample.id)]
        meta = score.metadata or {}
        assert ours.status == "ok" and score.value == ours.score
        assert meta["nodes"] == ours.nodes and meta["weights"] == ours.weights
        assert {k: (v["score"], v["reason"]) for k, v in meta["leaves"].items()} == {
            leaf.name: (leaf.score, leaf.reason) for leaf in ours.leaves}
    assert len({s.scores["tow"].value for s in log.samples}) > 1  # the replies differ per writing

    assert log.results is not None
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    expected = leaderboard_means(list(judgments.values()))
    assert metrics.keys() == expected.keys() and {"all", "completion", "guide", "content", "format"} <= set(metrics)
    assert all(math.isclose(metrics[k], expected[k], rel_tol=1e-12) for k in expected)
    assert math.isclose(metrics["all"], sum(j.score or 0 for j in judgments.values()) / 4, rel_tol=1e-12)


async def _eval_async(task: object, judge: object, tmp_path: Path) -> list[EvalLog]:
    from inspect_ai import eval_async

    return await eval_async(task, model=mock_writer(), model_roles={"grader": judge},  # type: ignore[arg-type]
                            log_dir=str(tmp_path / "logs"))


def test_inspect_eval_command_finds_the_task_by_its_entry_point(
        judge_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    inspect = Path(sys.executable).parent / "inspect"
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    done = subprocess.run(
        [str(inspect), "eval", "howtobench/howtobench", "--model", "openai-api/fake/writer",
         "--model-role", "grader=openai-api/fake/fake-judge", "-T", "task=open", "-T", "genre=poem", "-T", "limit=1",
         "--log-dir", str(tmp_path / "cli-logs"), "--display", "none", "--log-format", "json"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    [path] = list((tmp_path / "cli-logs").glob("*.json"))
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples is not None and len(log.samples) == 1
    sample = log.samples[0]
    assert (sample.metadata or {})["genre"] == "poem" and (sample.metadata or {})["task"] == "open"
    score = sample.scores["tow"] if sample.scores else None
    assert score is not None and isinstance(score.value, float) and not math.isnan(score.value)
    assert set((score.metadata or {})["leaves"]) == {"opening_ending", "language", "logic", "emotion", "plots",
                                                     "paragraphing", "formatting", "impression"}
    writer_calls = [r for r in judge_server.requests if not r.get("response_format")]
    assert len(writer_calls) == 1 and writer_calls[0]["model"] == "writer"
