"""Average scoring: stored ToW leaves re-aggregated with uniform weights, no model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import JUDGES, Judgment, LeafResult
from howtobench.judges.baselines.average import average_from_tow
from howtobench.judges.runner import run_judge
from howtobench.judges.tree import default_tree

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
    with pytest.raises(JudgeError, match="--from"):
        JUDGES["average"](client=None)
