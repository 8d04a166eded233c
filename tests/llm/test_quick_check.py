"""The quick check of reply schemas (`structured.quick_check`): it may only ever accept what jsonschema accepts."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from howtobench.judges.prompts import capped, leaf_schema, weights_schema
from howtobench.judges.tree import default_tree
from howtobench.llm import structured

TREE = default_tree()
LEAF = next(leaf for node in TREE.nodes for leaf in node.leaves if leaf.is_llm)
SCHEMAS = {
    "leaf": leaf_schema(LEAF),
    "leaf capped": capped(leaf_schema(LEAF, "score-first"), "analysis", 5),
    "weights": weights_schema(TREE.negotiated_nodes()),
}
LOW = LEAF.scale[0]
INSTANCES: list[Any] = [
    {"analysis": "fine", "score": LOW},
    {"score": LOW, "analysis": "fine"},
    {"analysis": "too long for five", "score": LOW},
    {"analysis": "fine", "score": True},  # a bool is no integer
    {"analysis": "fine", "score": float(LOW)},  # 6.0: an integer to JSON Schema, not to the quick check
    {"analysis": "fine", "score": 99},
    {"analysis": "fine", "score": str(LOW)},
    {"analysis": "fine"},
    {"analysis": "fine", "score": LOW, "extra": 1},
    {"analysis": 3, "score": LOW},
    {"analysis": None, "score": LOW},
    [],
    "text",
    {node.id: {leaf.id: 1 / len(node.leaves) for leaf in node.leaves} for node in TREE.negotiated_nodes()}
    | {"explanation": "why"},
    {node.id: {leaf.id: True for leaf in node.leaves} for node in TREE.negotiated_nodes()} | {"explanation": "why"},
    {node.id: {leaf.id: 1 for leaf in node.leaves} for node in TREE.negotiated_nodes()} | {"explanation": "why"},
    {node.id: {leaf.id: "0.5" for leaf in node.leaves} for node in TREE.negotiated_nodes()} | {"explanation": "x"},
    {node.id: {} for node in TREE.negotiated_nodes()} | {"explanation": "why"},
]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_quick_check_accepts_only_what_jsonschema_accepts(name: str) -> None:
    schema = SCHEMAS[name]
    check = structured.quick_check(schema)
    assert check is not None  # the judges' own reply schemas are covered
    validator = Draft202012Validator(schema)
    verdicts = [(check(x), validator.is_valid(x)) for x in INSTANCES]
    assert not [x for x, (quick, full) in zip(INSTANCES, verdicts, strict=True) if quick and not full]
    assert any(quick for quick, _ in verdicts)  # and it does accept the valid replies it covers


def test_quick_check_accepts_the_valid_leaf_replies_exactly() -> None:
    check = structured.quick_check(SCHEMAS["leaf"])
    assert check is not None
    assert [check(x) for x in INSTANCES[:11]] == [True, True, True] + [False] * 8


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},  # an unknown keyword, deep down
    {"type": ["string", "null"]},
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "integer", "enum": [1, 2.5]},
    {"type": "integer", "minimum": 1},
])
def test_quick_check_leaves_other_schemas_to_jsonschema(schema: dict[str, Any]) -> None:
    assert structured.quick_check(schema) is None


def test_validation_error_words_a_refused_reply_as_jsonschema_does() -> None:
    schema = SCHEMAS["leaf"]
    bad = {"analysis": "fine", "score": 99}
    expected = f"at score: {Draft202012Validator(schema).iter_errors(bad).__next__().message}"
    assert structured.validation_error(bad, schema, "quick-check-test") == expected
    assert structured.validation_error({"analysis": "ok", "score": float(LOW)}, schema, "quick-check-test") is None
