"""End to end: the rubric baseline judges one real release writing with the embedded local model.

The 270M model's scores mean nothing; the test shows the nested enum schemas work on a real grammar-constrained
server: the reply parses and every dimension lies within the 1-10 scale (a failed sample fails the test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.data.loader import load_items, load_release_writings
from howtobench.judges.base import Judgment
from howtobench.judges.baselines.rubric import RubricJudge

ITEM = "infer_1308"  # the shortest completion item
MODEL = "glm-4-plus-250111"


def check(judgment: Judgment) -> None:
    sample = judgment.samples[0]
    assert sample.status == "ok", (sample.error, sample.raw_text)
    assert judgment.status == "ok" and judgment.score is not None and 1 <= judgment.score <= 10
    assert sample.leaves and all(leaf.raw_score in range(1, 11) for leaf in sample.leaves)


@pytest.mark.local_model
@pytest.mark.timeout(900)
async def test_rubric_with_the_local_model(bench_root: Path, tmp_path: Path) -> None:
    from howtobench.llm.client import open_client
    from howtobench.llm.local import LOCAL_MODEL, local_endpoint

    items = {it.id: it for it in load_items(bench_root, ["completion"])}
    writing = next(w for w in load_release_writings(bench_root, ["completion"], [MODEL], items=list(items.values()))
                   if w.item_id == ITEM)
    async with local_endpoint(quiet=True) as local, open_client(local.model_copy(update={"reasks": 0}),
                                                                workspace=tmp_path) as client:
        judge = RubricJudge(client, max_tokens=400)
        judgment = await judge.judge(items[ITEM], writing)
    assert judgment.judge_model == LOCAL_MODEL and judgment.usage.calls == 1
    check(judgment)
    assert [x.name for x in judgment.leaves] == [d.id for d in judge.rubric(items[ITEM]).dimensions]
