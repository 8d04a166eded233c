"""Average scoring: stored ToW leaves re-aggregated with uniform weights, no model call."""

from __future__ import annotations

from pathlib import Path

import pytest
from tow_fakes import fake_client, tow_handler

from fake_server import FakeServer
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import JUDGES, Judgment, LeafResult
from howtobench.judges.baselines.average import average_from_tow
from howtobench.judges.runner import run_judge
from howtobench.judges.tree import default_tree
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.types import Usage
from howtobench.meta.correlate import total_cost

GUIDE = {"opening_ending": 8, "language": 6, "logic": 7, "emotion": 5, "plots": 10, "paragraphing": 5,
         "formatting": 0, "impression": 7}
COMPLETION = {"opening_ending": 9, "language": 6, "logic": 7, "emotion": 4, "impression": 6}


def tow(item_id: str, task: str, scores: dict[str, float | None], model: str = "m1") -> Judgment:
    leaves = [LeafResult(name=k, score=v, status="ok" if v is not None else "failed") for k, v in scores.items()]
    return Judgment(method="tow", item_id=item_id, model=model, task=task, genre="prose", score=5.5, leaves=leaves,
                    weights={"opening_ending": 0.7, "language": 0.1, "logic": 0.1, "emotion": 0.1},
                    tree_hash=default_tree().hash, judge_model="gpt-4o", cache_keys=["k1"])


def test_uniform_weights_reproduce_the_hand_computed_mean() -> None:
    guide = average_from_tow(tow("g", "guide", GUIDE))
    # content (8+6+7+5)/4 = 6.5, format (10+5+0)/3 = 5, impression 7; root = (4*6.5 + 3*5 + 7) / 8
    assert guide.nodes == pytest.approx({"content": 6.5, "format": 5.0, "impression": 7.0})
    assert guide.score == pytest.approx((4 * 6.5 + 3 * 5 + 7) / 8) == pytest.approx(sum(GUIDE.values()) / 8)
    assert (guide.method, guide.status, guide.usage.calls, guide.meta["from_tow_score"]) == ("average", "ok", 0, 5.5)
    assert guide.weights["opening_ending"] == 0.25 and guide.weights["plots"] == pytest.approx(1 / 3)
    completion = average_from_tow(tow("c", "completion", COMPLETION))
    assert completion.score == pytest.approx((9 + 6 + 7 + 4 + 6) / 5) and "format" not in completion.nodes


def test_failed_leaf_gives_no_score_unless_renormalized() -> None:
    broken = tow("g", "guide", {**GUIDE, "logic": None})
    assert (average_from_tow(broken).score, average_from_tow(broken).status) == (None, "failed")
    fixed = average_from_tow(broken, renormalize=True)
    assert fixed.status == "renormalized" and fixed.nodes["content"] == pytest.approx((8 + 6 + 5) / 3)


def test_other_methods_and_other_trees_are_refused() -> None:
    with pytest.raises(JudgeError, match="needs a ToW judgment"):
        average_from_tow(tow("g", "guide", GUIDE).model_copy(update={"method": "single"}))
    with pytest.raises(JudgeError, match="used tree"):
        average_from_tow(tow("g", "guide", GUIDE).model_copy(update={"tree_hash": "f" * 64}))


async def test_average_judge_reads_a_tow_file_and_runs_without_a_model(tmp_path: Path) -> None:
    stored = tmp_path / "tow.jsonl"
    stored.write_text(tow("i1", "guide", GUIDE).model_dump_json() + "\n", encoding="utf-8")
    judge = JUDGES["average"](client=None, tow_results=stored)
    items = [Item(infer_id=f"i{k}", task_type="guide", basic_instruction="写") for k in (1, 2)]
    pairs = [(it, Writing(infer_id=it.id, model="m1", output="正文")) for it in items]
    out = await run_judge(judge, pairs, tmp_path / "average.jsonl", progress=False)
    assert out[0].score == pytest.approx(sum(GUIDE.values()) / 8)
    assert out[1].status == "failed" and "no ToW judgment for item i2" in out[1].failures[0]
    assert out[0].reference_source is None  # the stored ToW judgment read no reference: neither did its average
    sourced = tow("i1", "guide", GUIDE).model_copy(update={"reference_source": "model:deepseek-chat"})
    assert average_from_tow(sourced).reference_source == "model:deepseek-chat"
    with pytest.raises(JudgeError, match="--from"):
        JUDGES["average"](client=None)


def test_average_scoring_bills_the_tow_leaf_calls_it_reuses() -> None:
    """Table 3 bills average scoring $7.02 next to ToW's $7.34: the ToW leaves without J_W. Nothing is spent again
    (its own usage stays empty), the re-used leaf calls are its cost in `meta correlate`."""
    leaf_usage = Usage(calls=7, prompt_tokens=7000, completion_tokens=700, cost_usd=0.07)
    stored = tow("g", "guide", GUIDE).model_copy(update={
        "usage": leaf_usage + Usage(calls=1, prompt_tokens=500, completion_tokens=50, cost_usd=0.005),
        "meta": {"leaf_usage": leaf_usage.model_dump()}})
    avg = average_from_tow(stored)
    assert avg.usage == Usage() and Usage.model_validate(avg.meta["reused_usage"]) == leaf_usage
    human = {("g", "m1"): 3.0}
    assert total_cost([avg], human) == pytest.approx(0.07) and total_cost([stored], human) == pytest.approx(0.075)
    older = average_from_tow(tow("g", "guide", GUIDE))  # a ToW file from before leaf usage was recorded
    assert "reused_usage" not in older.meta and total_cost([older], human) is None


async def test_tow_judgments_record_their_leaf_usage(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client).judge(
            Item(infer_id="i0", task_type="guide", basic_instruction="写", reference="范文"),
            Writing(infer_id="i0", model="m1", output="正文。\n\n正文。"))
    assert judgment.usage.calls == 8 and Usage.model_validate(judgment.meta["leaf_usage"]).calls == 7
