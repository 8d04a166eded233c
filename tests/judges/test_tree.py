"""Tree specs as data: the default tree is the paper's, edits need no code, bad specs fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from howtobench.errors import JudgeError
from howtobench.judges.tree import TREES_DIR, default_tree, load_tree


def test_default_tree_is_the_papers() -> None:
    tree = default_tree()
    assert [n.id for n in tree.nodes] == ["content", "format", "impression"]
    assert [leaf.id for leaf in tree.nodes[0].leaves] == ["opening_ending", "language", "logic", "emotion"]
    assert [leaf.id for leaf in tree.nodes[1].leaves] == ["plots", "paragraphing", "formatting"]
    assert tree.reference_anchor == 6
    assert [n.id for n in tree.nodes_for("completion")] == ["content", "impression"]
    assert [n.id for n in tree.nodes_for("guide")] == ["content", "format", "impression"]
    assert [n.id for n in tree.negotiated_nodes("open")] == ["content", "format"]


def test_plots_steps_1_to_10_onto_0_5_10() -> None:
    """The authors' _to_step: 1-3 -> 0, 4-7 -> 5, 8-10 -> 10; the reference's 6 is worth 5."""
    leaf = default_tree().nodes[1].leaves[0]
    assert (leaf.id, leaf.kind, leaf.reference, leaf.template_name) == ("plots", "llm-step", "anchor", "rubric")
    assert leaf.scale == tuple(range(1, 11))
    assert [leaf.score_of(x) for x in range(1, 11)] == [0, 0, 0, 5, 5, 5, 5, 10, 10, 10]
    assert leaf.lowest == (1, 0.0)


def test_leaves_use_the_reference_as_the_authors_do() -> None:
    uses = {leaf.id: leaf.reference for leaf in default_tree().leaves_for("guide") if leaf.is_llm}
    assert uses == {"opening_ending": "anchor", "language": "anchor", "logic": "anchor", "emotion": "anchor",
                    "plots": "anchor", "paragraphing": "hidden", "impression": "shown"}
    assert all(len(leaf.bands) == 5 for leaf in default_tree().leaves_for("guide") if leaf.reference == "anchor")


def test_base_tree_is_extended_and_loops_are_caught(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("base: b.yaml\nname: a\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("base: a.yaml\nname: b\n", encoding="utf-8")
    with pytest.raises(JudgeError, match="loops"):
        load_tree(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("base: default\nname: mine\nreference_anchor: 5\n", encoding="utf-8")
    mine = load_tree(tmp_path / "c.yaml")
    assert (mine.name, mine.reference_anchor, mine.nodes) == ("mine", 5, default_tree().nodes)


def test_paragraphing_mapping_is_5_times_x_minus_1() -> None:
    leaf = default_tree().nodes[1].leaves[1]
    assert [leaf.score_of(x) for x in (1, 2, 3)] == [0.0, 5.0, 10.0]
    assert leaf.lowest == (1, 0.0)
    assert leaf.template_name == "scale"
    with pytest.raises(JudgeError):
        leaf.score_of(4)


def test_hash_is_stable_and_changes_with_the_spec(tmp_path: Path) -> None:
    spec = yaml.safe_load((TREES_DIR / "default.yaml").read_text(encoding="utf-8"))
    assert load_tree("default").hash == default_tree().hash
    assert len(default_tree().hash) == 64
    spec["nodes"][0]["leaves"][0]["criteria"]["en"] += " And one more question?"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    assert load_tree(path).hash != default_tree().hash


def with_examples_leaf(tmp_path: Path) -> Path:
    """The default tree plus a user's 'use of examples' content leaf, written as YAML only."""
    spec = yaml.safe_load((TREES_DIR / "default.yaml").read_text(encoding="utf-8"))
    spec["nodes"][0]["leaves"].append(
        {
            "id": "examples",
            "label": {"zh": "举例", "en": "Use of examples"},
            "kind": "llm-rubric",
            "scale": list(range(1, 11)),
            "criteria": {"zh": "例子是否具体、贴切并支撑观点。", "en": "Are examples concrete, apt and supportive?"},
        }
    )
    path = tmp_path / "examples.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def test_user_adds_a_leaf_by_yaml(tmp_path: Path) -> None:
    tree = load_tree(with_examples_leaf(tmp_path))
    assert [leaf.id for leaf in tree.leaves_for("guide")][3:6] == ["emotion", "examples", "plots"]
    assert len(tree.leaves_for("completion")) == 6


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["nodes"][1]["leaves"][1].pop("mapping"), "needs a mapping"),
        (lambda s: s["nodes"][1]["leaves"][1].update(mapping={1: 0, 2: 5}), "mapping keys"),
        (lambda s: s["nodes"][0]["leaves"][0].update(scale=[1, 1, 2]), "repeat"),
        (lambda s: s["nodes"][0]["leaves"][1].update(id="logic"), "unique"),
        (lambda s: s["nodes"][2]["leaves"].append(s["nodes"][0]["leaves"][0]), "exactly one leaf"),
        (lambda s: s["nodes"][0]["leaves"][0].update(kind="llm-magic"), "kind"),
    ],
)
def test_invalid_specs_are_rejected(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    spec = yaml.safe_load((TREES_DIR / "default.yaml").read_text(encoding="utf-8"))
    edit(spec)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    with pytest.raises(JudgeError, match=message) as info:
        load_tree(path)
    assert "\n" not in str(info.value) and "pydantic" not in str(info.value)  # one line, not pydantic's dump


def test_missing_tree_file(tmp_path: Path) -> None:
    """`--tree defualt` used to name the bundled folder's path in a multi-line error; a YAML slip too."""
    known = r"unknown tree 'defualt' \(did you mean 'default'\?\); known: analysis-first, debiased"
    with pytest.raises(JudgeError, match=known):
        load_tree("defualt")
    with pytest.raises(JudgeError, match="no tree spec file .*mine.yaml"):
        load_tree(tmp_path / "mine.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("base: default\nleaves: [1,\n", encoding="utf-8")
    with pytest.raises(JudgeError, match=r"^tree spec .*broken.yaml:3:1: expected the node content"):
        load_tree(broken)
