"""The howtobench task end to end on inspect's mockllm: hand-computed scores, leaves in the metadata,
failures unscored (never a number), a missing judge and a judge that raises stop the sample, not the data."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra installs inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_fakes import first_user, leaf_score, mock_judge, mock_writer, schema_of, weights_for, writing_for

from howtobench.inspect_eval.dataset import howtobench_dataset
from howtobench.inspect_eval.task import howtobench

# guide: content 0.4*8 + 0.3*6 + 0.2*7 + 0.1*5 = 6.9; format 0.5*10 + 0.3*5 (paragraphing 2 -> 5) + 0.2*F
FIXED = {"opening_ending": 8, "language": 6, "logic": 7, "emotion": 5, "plots": 10, "paragraphing": 2,
         "impression": 7}


def fixed_reply(request: dict[str, Any]) -> dict[str, Any] | str:
    name, schema = schema_of(request)
    if name == "weights":
        return weights_for(schema)
    leaf, _ = leaf_score(first_user(request))
    return {"analysis": f"{leaf} <b>fine</b> | ok", "score": FIXED[leaf]}


def run(tmp_path: Path, bench_root: Path, judge: Any = None, **args: Any) -> EvalLog:
    task = howtobench(data=str(bench_root), **args)
    roles = {"grader": judge} if judge is not None else None
    [log] = inspect_eval(task, model=mock_writer(), model_roles=roles, log_dir=str(tmp_path / "logs"),
                         display="none", fail_on_error=False)
    return log


def test_tow_root_nodes_and_leaves(tmp_path: Path, bench_root: Path) -> None:
    log = run(tmp_path, bench_root, mock_judge(fixed_reply), task="guide", limit=2)
    assert log.status == "success" and log.samples and len(log.samples) == 2
    for sample in log.samples:
        score = sample.scores["tow"]
        # the writing has '#' and '##' headings, consistently: formatting 10 -> format 5 + 1.5 + 2 = 8.5
        meta = score.metadata or {}
        assert meta["leaves"]["formatting"]["score"] == 10
        assert meta["nodes"] == {"content": 6.9, "format": 8.5, "impression": 7.0}
        assert score.value == (4 * 6.9 + 3 * 8.5 + 7) / 8
        assert meta["leaves"]["logic"] == {"node": "content", "score": 7.0, "raw_score": 7.0, "weight": 0.2,
                                           "reason": "logic <b>fine</b> | ok", "status": "ok", "error": None}
        assert meta["leaves"]["paragraphing"]["raw_score"] == 2 and meta["leaves"]["paragraphing"]["score"] == 5
        assert meta["judgment"]["judge_model"] == "mockllm/judge" and meta["judgment"]["model"] == "writer"
        # the explanation table never carries the judge's raw HTML or a cell-breaking pipe
        assert "| logic | content | 7 | 0.2 | logic &lt;b&gt;fine&lt;/b&gt; ¦ ok |" in (score.explanation or "")
    assert log.results is not None
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["all"] == metrics["guide"] == (4 * 6.9 + 3 * 8.5 + 7) / 8
    assert metrics["content"] == 6.9 and metrics["format"] == 8.5 and metrics["impression"] == 7.0


def test_a_failed_leaf_is_an_unscored_sample(tmp_path: Path, bench_root: Path) -> None:
    items = howtobench_dataset(tasks=["guide"], limit=2, data=bench_root)
    marker = (items[1].metadata or {})["instruction"]
    bad_asks: list[str] = []

    def broken_for_one_item(request: dict[str, Any]) -> dict[str, Any] | str:
        answer = fixed_reply(request)
        prompt = first_user(request)
        if isinstance(answer, dict) and str(answer.get("analysis", "")).startswith("logic") and marker in prompt:
            bad_asks.append(prompt)
            return '{"analysis": "x", "score": 42}'  # out of the scale, on every ask
        return answer

    log = run(tmp_path, bench_root, mock_judge(broken_for_one_item), task="guide", limit=2)
    assert log.samples is not None and log.results is not None
    good, bad = log.samples[0].scores["tow"], log.samples[1].scores["tow"]
    assert isinstance(bad.value, float) and math.isnan(bad.value) and bad.reason == "grader_failed"
    meta = bad.metadata or {}
    assert meta["status"] == "failed" and meta["leaves"]["logic"]["status"] == "failed"
    assert "no valid reply after 3 asks" in meta["leaves"]["logic"]["error"]
    assert meta["leaves"]["logic"]["score"] is None and meta["leaves"]["language"]["score"] == 6
    assert len(bad_asks) == 3  # the first ask and two re-asks, all invalid
    result = log.results.scores[0]
    assert (result.scored_samples, result.unscored_samples) == (1, 1)
    assert result.metrics["all"].value == good.value == (4 * 6.9 + 3 * 8.5 + 7) / 8


def test_without_a_judge_the_sample_errors_before_the_writer_is_paid(tmp_path: Path, bench_root: Path) -> None:
    """A missing grader was found only when scoring: after every writing had been generated (and paid for)."""
    asked: list[str] = []

    def counting(messages: list[Any]) -> str:
        asked.append(writing_for(messages))
        return asked[-1]

    task = howtobench(data=str(bench_root), task="open", limit=2)
    [log] = inspect_eval(task, model=mock_writer(counting), log_dir=str(tmp_path / "logs"), display="none",
                         fail_on_error=False)
    assert log.samples and all(s.error is not None for s in log.samples)
    assert all("--model-role grader=" in s.error.message for s in log.samples if s.error)
    assert asked == [] and not any(s.scores for s in log.samples)  # nothing generated


def test_a_judge_that_raises_errors_the_sample(tmp_path: Path, bench_root: Path) -> None:
    def unreachable(request: dict[str, Any]) -> dict[str, Any] | str:
        raise ConnectionError("judge provider unreachable")

    log = run(tmp_path, bench_root, mock_judge(unreachable), task="open", limit=1)
    assert log.samples and log.samples[0].error is not None
    assert "unreachable" in log.samples[0].error.message and not log.samples[0].scores


def test_rubric_baseline_scores_the_judges_overall(tmp_path: Path, bench_root: Path) -> None:
    def rubric_reply(request: dict[str, Any]) -> dict[str, Any]:
        _, schema = schema_of(request)
        dims = schema["properties"]["dimensions"]["required"]
        return {"dimensions": {d: {"reason": "r", "score": 4} for d in dims}, "reason": "overall", "score": 9}

    log = run(tmp_path, bench_root, mock_judge(rubric_reply), task="open", limit=1, method="rubric")
    assert log.samples and log.samples[0].error is None
    score = log.samples[0].scores["rubric"]
    assert score.value == 9.0 and (score.metadata or {})["method"] == "rubric"
    assert {leaf["score"] for leaf in (score.metadata or {})["leaves"].values()} == {4.0}


def test_an_empty_writing_follows_the_leaderboards_convention(tmp_path: Path, bench_root: Path) -> None:
    def writer_with_one_empty(messages: list[Any]) -> str:
        return "" if marker in messages[-1].text else writing_for(messages)

    marker = (howtobench_dataset(tasks=["guide"], limit=2, data=bench_root)[1].metadata or {})["instruction"][:40]
    logs = {}
    for empty in ("exclude", "lowest"):
        task = howtobench(data=str(bench_root), task="guide", limit=2, empty=empty)
        [logs[empty]] = inspect_eval(task, model=mock_writer(writer_with_one_empty),
                                     model_roles={"grader": mock_judge(fixed_reply)},
                                     log_dir=str(tmp_path / empty), display="none")
    excluded, lowest = logs["exclude"], logs["lowest"]
    assert excluded.samples and lowest.samples and excluded.results and lowest.results
    gone = excluded.samples[1].scores["tow"]
    assert isinstance(gone.value, float) and math.isnan(gone.value) and gone.reason == "no_response"
    assert (gone.metadata or {})["status"] == "empty"
    assert excluded.results.scores[0].unscored_samples == 1
    written = (4 * 6.9 + 3 * 8.5 + 7) / 8
    assert excluded.results.scores[0].metrics["all"].value == written
    floor = lowest.samples[1].scores["tow"].value
    assert isinstance(floor, float) and floor < 2  # every leaf at its lowest
    assert lowest.results.scores[0].metrics["all"].value == pytest.approx((written + floor) / 2)


def test_sampled_weights_keep_each_samples_nodes_in_the_score() -> None:
    """A ToW judgment with three weight samples: the Score's metadata and explanation carry every sample's root and
    node scores (inspect keeps one Score per epoch, so the samples are only there)."""
    from howtobench.inspect_eval.scorers import explanation, score_metadata
    from howtobench.judges.base import Judgment, SampleResult

    samples = [SampleResult(index=k, score=5.0 + k, nodes={"content": 6.0 + k, "impression": 4.0}) for k in range(3)]
    judgment = Judgment(method="tow", item_id="i", model="m", task="completion", genre="fiction", score=6.0,
                        nodes=samples[0].nodes, samples=samples)
    meta = score_metadata(judgment)
    assert [s["nodes"]["content"] for s in meta["samples"]] == [6.0, 7.0, 8.0]
    assert [s["score"] for s in meta["samples"]] == [5.0, 6.0, 7.0]
    text = explanation(judgment)
    assert "3 samples (the score is their mean):" in text and "- #2: 7 (ok), content 8, impression 4" in text


@pytest.mark.parametrize(("language", "mark"), [(None, "[Criterion:"), ("zh", "【评审项目：")])
def test_the_task_takes_the_judge_prompt_language(tmp_path: Path, bench_root: Path, language: str | None,
                                                  mark: str) -> None:
    seen: list[str] = []

    def reply(request: dict[str, Any]) -> dict[str, Any] | str:
        seen.append(first_user(request))
        return fixed_reply(request)

    args = {} if language is None else {"prompt_language": language}
    log = run(tmp_path, bench_root, mock_judge(reply), task="guide", limit=1, **args)
    assert log.status == "success" and log.samples
    assert (log.samples[0].scores["tow"].metadata or {})["judgment"]["prompt_language"] == (language or "en")
    leaf_prompts = [u for u in seen if "<<<END WRITING>>>" in u]
    assert leaf_prompts and all(mark in u for u in leaf_prompts)
