"""Node ablation (Table 5) on judgments whose recomputed roots are known exactly."""

from __future__ import annotations

import itertools
import json
import math
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from meta_helpers import judgment
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, default_handler
from howtobench.cli.main import app
from howtobench.judges.base import Judgment, LeafResult
from howtobench.meta.ablation import ablation_rows, leaf_counts, recompute_root, unreproduced_roots, variants
from howtobench.meta.correlate import CorrelationSettings, correlate_method
from howtobench.meta.judgments import load_judgments

LEAVES = {"content": 4, "format": 3, "impression": 1}


def tow(item: str, model: str, c: float, f: float | None, i: float, task: str = "guide") -> Judgment:
    nodes: dict[str, float | None] = {"content": c, "format": f, "impression": i}
    if task == "completion":
        del nodes["format"]
    leaves = [LeafResult(name=f"{n}{k}", node=n, score=1.0) for n in nodes for k in range(LEAVES[n])]
    root = recompute_root(Judgment(method="tow", item_id=item, model=model, task=task, genre="x", nodes=nodes,
                                   leaves=leaves), set(nodes))
    return judgment(item, model, root, task=task, nodes=nodes, leaves=leaves)


def test_recompute_rule() -> None:
    j = tow("i", "m", 8.0, 4.0, 6.0)
    assert leaf_counts(j) == {"content": 4, "format": 3, "impression": 1}
    assert j.score == pytest.approx((4 * 8 + 3 * 4 + 6) / 8)
    assert recompute_root(j, {"content", "impression"}) == pytest.approx((4 * 8 + 6) / 5)
    assert recompute_root(j, {"format"}) == 4.0
    comp = tow("i", "m", 8.0, None, 6.0, task="completion")
    assert recompute_root(comp, {"format"}) is None
    assert recompute_root(comp, {"content", "impression"}) == comp.score
    assert [v[0] for v in variants(["content", "format", "impression"])] == [
        "ToW (all nodes)", "w/o Content", "w/o Format", "w/o Impression", "w Content", "w Format", "w Impression",
    ]


def test_ablation_rows_correlations() -> None:
    # humans follow content exactly; format is reversed; impression is constant
    js, human = [], {}
    for i in range(3):
        for k, m in enumerate("abcd"):
            js.append(tow(f"i{i}", m, 2.0 + k, 9.0 - k, 5.0))
            human[(f"i{i}", m)] = 1.0 + k
    js.append(judgment("i0", "e", None, nodes={"content": 9.0}))  # failed overall: left out everywhere
    human[("i0", "e")] = 5.0
    rows = {r.method: r for r in ablation_rows(js, human, CorrelationSettings(n_boot=50))}
    assert rows["w Content"].cells[("system", "guide", "pearson")].value == pytest.approx(1.0)
    assert rows["w Format"].cells[("sample", "all", "kendall")].value == pytest.approx(-1.0)
    # w/o Content: (3 * (9 - k) + 5) / 4 decreases with k -> perfectly anti-correlated
    assert rows["w/o Content"].cells[("system", "all", "spearman")].value == pytest.approx(-1.0)
    # full: (4(2+k) + 3(9-k) + 5) / 8 = (40 + k) / 8 increases with k
    assert rows["ToW (all nodes)"].cells[("system", "all", "pearson")].value == pytest.approx(1.0)
    constant = rows["w Impression"].cells[("system", "all", "pearson")].value
    assert math.isnan(constant)  # constant scores: undefined, never a made-up number
    assert rows["ToW (all nodes)"].n_models["all"] == 4


def _renormalised(item: str, model: str, k: int) -> Judgment:
    """A Guide judgment of the default tree scored by `judges.aggregate` with one Content leaf failed."""
    from howtobench.judges.aggregate import aggregate
    from howtobench.judges.tree import default_tree

    tree = default_tree()
    leaves = [LeafResult(name=leaf.id, node=node.id, score=float(2 + (k * 3 + n) % 8))
              for node in tree.nodes_for("guide") for n, leaf in enumerate(node.leaves)]
    if k % 2 == 0:  # every other writing lost its first content leaf
        leaves[0] = LeafResult(name=leaves[0].name, node="content", score=None, status="failed")
    weights = {node.id: {leaf.id: 1 / len(node.leaves) for leaf in node.leaves} for node in tree.negotiated_nodes()}
    agg = aggregate(tree, "guide", {x.name: x.score for x in leaves}, weights, renormalize=True)
    return judgment(item, model, agg.root, status=agg.status, nodes=agg.nodes, leaves=leaves)


def test_renormalised_judgments_count_only_scored_leaves() -> None:
    js = [_renormalised(f"i{i}", m, i + 3 * k) for i in range(4) for k, m in enumerate("abc")]
    broken = next(j for j in js if j.status == "renormalized")
    # 4 content leaves, one failed: the stored root weighted content by 3 (hand: (3 C + 3 F + I) / 7)
    assert leaf_counts(broken) == {"content": 3, "format": 3, "impression": 1}
    c, f, i = broken.nodes["content"], broken.nodes["format"], broken.nodes["impression"]
    assert broken.score == pytest.approx((3 * c + 3 * f + i) / 7)  # type: ignore[operator]
    for j in js:
        assert recompute_root(j, set(j.nodes)) == pytest.approx(j.score)
    # the full-tree row of Table 5 is the `meta correlate` row of the same file, cell for cell
    human = {(j.item_id, j.model): float((7 * n) % 5 + 1) for n, j in enumerate(js)}
    settings = CorrelationSettings(n_boot=50)
    full = ablation_rows(js, human, settings)[0]
    (plain,) = correlate_method("tow", js, human, settings)
    assert full.cells == plain.cells
    assert unreproduced_roots(js) == 0
    # a sampled-weights ToW judgment: mean root over samples, first sample's nodes -> flagged, not silently mixed
    sampled = js[1].model_copy(update={"score": (js[1].score or 0) + 0.25})
    assert unreproduced_roots([*js, sampled]) == 1


# ------------------------------------------------------------------ ToW with sampled weights (--samples n)
SAMPLED_MODELS = ["gpt-4o-2024-11-20", "deepseek-chat", "claude-3-5-sonnet-20241022"]


def _rotating_weights() -> Callable[[dict[str, Any]], Reply]:
    """Valid J_W replies that differ from one weight call to the next (so the samples' Content / Format differ);
    leaf scores come from the fake server's deterministic schema-shaped replies (they vary with the writing)."""
    calls = itertools.count()
    shapes = {4: [0.4, 0.3, 0.2, 0.1], 3: [0.5, 0.3, 0.2]}

    def handle(request: dict[str, Any]) -> Reply:
        schema = (request.get("response_format") or {}).get("json_schema") or {}
        if schema.get("name") != "weights":
            return default_handler(request)
        n = next(calls)
        body: dict[str, Any] = {"explanation": "varied"}
        for group, spec in schema["schema"]["properties"].items():
            if spec.get("type") == "object":
                leaves, values = spec["required"], shapes[len(spec["required"])]
                body[group] = {leaf: values[(k + n) % len(values)] for k, leaf in enumerate(leaves)}
        return Reply.json(body)

    return handle


def _cells(output: str, row: str) -> list[dict[str, Any]]:
    """The ρ / τ / σ columns of one row, per level, from `--format json` output."""
    tables = json.loads(output)
    found = [next(r for r in t["rows"] if r["Method"] == row) for t in tables]
    return [{k: v for k, v in r.items() if k.endswith(("ρ", "τ", "σ"))} for r in found]


def test_sampled_weights_full_tree_row_equals_correlate(fake_server: FakeServer, tmp_path: Path,
                                                        bench_root: Path) -> None:
    """ToW judged with --samples 3 through the fake server stores every sample's node scores; meta ablation
    recomputes each sample's root and averages them as the judge does, so its full-tree row is the SC row of
    meta correlate on the same file, cell for cell (before, only the first sample's nodes were stored)."""
    fake_server.handler = _rotating_weights()
    out = tmp_path / "tow.jsonl"
    args = ["judge", "--data", str(bench_root), "--task", "guide", "--limit", "3", "--samples", "3",
            "--judge-base-url", fake_server.base_url, "--judge-model", "fake-judge", "--workspace",
            str(tmp_path / "ws"), "-o", str(out), "--no-progress", "--no-preflight"]
    for model in SAMPLED_MODELS:
        args += ["--models", model]
    judged = CliRunner().invoke(app, args)
    assert judged.exit_code == 0, judged.output
    js = load_judgments(out)
    assert len(js) == 9 and all(j.status == "ok" and len(j.samples) == 3 for j in js)
    for j in js:
        assert j.nodes == j.samples[0].nodes  # the judgment's nodes are still the first sample's
        assert len({s.nodes["content"] for s in j.samples}) > 1  # the samples' weights differ
        roots = [recompute_root(j.model_copy(update={"samples": [], "nodes": s.nodes}), set(s.nodes))
                 for s in j.samples]
        assert roots == pytest.approx([s.score for s in j.samples], abs=1e-12)
        assert j.score == pytest.approx(sum(roots) / 3, abs=1e-12)  # type: ignore[arg-type]
    assert unreproduced_roots(js) == 0
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({"item_id": j.item_id, "model": j.model, "rater": "r",
                                         "score": 1 + (zlib.crc32(f"{j.item_id}{j.model}".encode()) % 5)}) + "\n"
                             for j in js), encoding="utf-8")
    common = ["--human", str(human), "--format", "json", "--bootstrap", "50"]
    ablation = CliRunner().invoke(app, ["meta", "ablation", str(out), *common])
    correlate = CliRunner().invoke(app, ["meta", "correlate", str(out), *common])
    assert ablation.exit_code == 0 and correlate.exit_code == 0, ablation.output + correlate.output
    full, sc = _cells(ablation.stdout, "ToW (all nodes)"), _cells(correlate.stdout, "tow + SC (n=3)")
    assert full == sc and any(v is not None for level in full for v in level.values())
    assert "stored roots are not" not in ablation.output
    # a file written before per-sample nodes were stored still reads, and ablation says what it cannot redo
    old = tmp_path / "old.jsonl"
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        for sample in row["samples"]:
            del sample["nodes"]
    old.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [j.score for j in load_judgments(old)] == [j.score for j in js]
    stale = CliRunner().invoke(app, ["meta", "ablation", str(old), *common])
    # without per-sample nodes only the first sample's root can be redone: the others are counted, never guessed
    differ = sum(recompute_root(j.model_copy(update={"samples": []}), set(j.nodes)) != pytest.approx(j.score,
                 abs=1e-12) for j in js)
    assert differ > 0 and stale.exit_code == 0
    assert f"{differ} stored roots are not the leaf-weighted mean" in stale.output
