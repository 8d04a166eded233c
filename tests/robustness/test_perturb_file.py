"""`perturb_file` on a tiny benchmark: judgment-file input, references for the control, pool for pad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from howtobench.errors import ConfigError
from howtobench.judges.base import Judgment
from howtobench.robustness.perturb_file import perturb_file


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def tiny_bench(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    items = [{"infer_id": f"infer_{k}", "bench_id": f"b{k}", "task_type": "open", "sub_task": "议论文",
              "basic_instruction": "写一篇文章", "information": "", "reference": f"参考范文{k}。第二句{k}。"}
             for k in range(3)]
    _jsonl(root / "open" / "aligned.jsonl", items)
    writings = [{"infer_id": f"infer_{k}", "task_type": "open", "model": "m", "output": f"第一段{k}。\n\n第二段{k}。"}
                for k in range(3)]
    _jsonl(root / "open" / "inferences" / "m.jsonl", writings)
    return root


async def test_judgment_file_input_and_reference_control(tiny_bench: Path, tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    rows = [Judgment(method="bleu", item_id=f"infer_{k}", model="m", task="open", genre="argumentative", score=1.0)
            for k in (2, 0)]
    judged.write_text("".join(j.model_dump_json() + "\n" for j in rows), encoding="utf-8")
    out = tmp_path / "ref.jsonl"
    summary = await perturb_file(judged, "reference", 0, out, data_root=tiny_bench, workspace=tmp_path / "ws",
                                 progress=False)
    assert (summary.written, summary.failed) == (2, 0)
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(w["infer_id"], w["model"], w["output"]) for w in written] == [
        ("infer_2", "m+reference", "参考范文2。第二句2。"), ("infer_0", "m+reference", "参考范文0。第二句0。")]
    with pytest.raises(ConfigError, match="--data"):
        await perturb_file(judged, "drop", 0, out, workspace=tmp_path / "ws", progress=False)


async def test_pad_takes_filler_from_other_items_references(tiny_bench: Path, tmp_path: Path) -> None:
    source = tiny_bench / "open" / "inferences" / "m.jsonl"
    out = tmp_path / "pad.jsonl"
    await perturb_file(source, "pad", 4, out, data_root=tiny_bench, workspace=tmp_path / "ws", progress=False)
    for row in map(json.loads, out.read_text(encoding="utf-8").splitlines()):
        change = row["perturbation"]["changes"][0]
        assert change["pool"] == "given"
        own = row["infer_id"].removeprefix("infer_")
        filler = row["output"].split("\n\n")[2:]
        assert filler and all("参考范文" in f or "第二句" in f for f in filler)
        assert all(f"范文{own}" not in f and f"第二句{own}" not in f for f in filler)  # never the item's own reference
