"""End to end: ToW judges two real release writings with the embedded local model (llama.cpp + Gemma-3-270M).

The 270M model's scores mean nothing; the test shows the pipeline works on a real grammar-constrained server:
every leaf comes back parsed and within its scale (greedy decoding: the same replies every run), weights are
negotiated once for the item, and each root is on the 0-10 footing. A server that crashes or answers nothing
fails this test: a failed leaf is not an acceptable outcome here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.data.loader import load_items, load_release_writings
from howtobench.judges.runner import run_judge
from howtobench.judges.tree_of_writing import TreeOfWriting

ITEM = "infer_1308"  # the shortest completion item: 5 LLM leaves per writing on a CPU-only machine
MODELS = ["glm-4-plus-250111", "claude-3-5-sonnet-20241022"]


@pytest.mark.local_model
@pytest.mark.timeout(900)
async def test_tow_on_two_release_writings_with_the_local_model(bench_root: Path, tmp_path: Path) -> None:
    from howtobench.llm.client import open_client
    from howtobench.llm.local import LOCAL_MODEL, local_endpoint

    items = {it.id: it for it in load_items(bench_root, ["completion"])}
    writings = [w for w in load_release_writings(bench_root, ["completion"], MODELS, items=list(items.values()))
                if w.item_id == ITEM]
    assert len(writings) == 2
    async with local_endpoint(quiet=True) as local:
        endpoint = local.model_copy(update={"reasks": 0})  # bounded: 1 weights call + 10 leaf calls
        async with open_client(endpoint, workspace=tmp_path) as client:
            # the smoke judge's cap on the reason: score-first leaves put the reason after the score, and the
            # 270M model's uncapped reason runs past any small max_tokens (SMOKE_JUDGE_OPTIONS caps it the same way)
            judge = TreeOfWriting(client, max_tokens=112, reasks=0, analysis_max_chars=60)
            judgments = await run_judge(judge, [(items[ITEM], w) for w in writings], tmp_path / "tow.jsonl",
                                        progress=False)
            weight_calls = client.usage_by_purpose()["weights"].calls
    assert weight_calls == 1  # one negotiation for the item, shared by both models
    assert len(judgments) == 2 and len((tmp_path / "tow.jsonl").read_text().splitlines()) == 2
    tree = judge.tree
    for judgment in judgments:
        assert judgment.judge_model == LOCAL_MODEL and judgment.tree_hash == tree.hash
        assert [x.name for x in judgment.leaves] == [leaf.id for leaf in tree.leaves_for("completion")]
        for result, leaf in zip(judgment.leaves, tree.leaves_for("completion"), strict=True):
            assert result.status == "ok", (result.name, result.error, result.raw_text)
            assert result.raw_score in leaf.scale and result.score == leaf.score_of(int(result.raw_score or 0))
        assert judgment.status == "ok" and judgment.failures == []
        assert judgment.score is not None and 0 <= judgment.score <= 10
