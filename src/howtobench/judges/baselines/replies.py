"""The pieces of a baseline's reply: its JSON schema (scores as enums of the 1-10 scale, closed objects) and
the checks that turn a schema-valid reply into scores, or a ReplyError that fails the sample.

Every baseline reply gives its reason before its score. The schemas are part of each call's cache key
(llm/keys.py), so their shape, key order included, is pinned by tests/judges/test_baselines.py.
"""

from __future__ import annotations

from typing import Any

from howtobench.judges.base import LeafResult

SCORES: tuple[int, ...] = tuple(range(1, 11))
LOWEST = float(SCORES[0])


class ReplyError(ValueError):
    """A schema-valid reply that still cannot be used (e.g. a score outside the scale); the sample fails."""


def score_schema(description: str = "") -> dict[str, Any]:
    """A 1-10 integer score as an enum, so grammar-constrained servers cannot leave the scale."""
    schema: dict[str, Any] = {"type": "integer", "enum": list(SCORES)}
    if description:
        schema["description"] = description
    return schema


def valid_score(value: Any, where: str) -> int:
    """The score if it is an integer of the scale; otherwise a ReplyError naming where it was."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in SCORES:
        raise ReplyError(f"{where}: score {value!r} is not one of 1..10")
    return value


def closed_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema object of exactly `properties`, each required: what strict structured outputs accept."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def reasoned_score(**before: dict[str, Any]) -> dict[str, Any]:
    """One scored entry: the properties `before` (e.g. an aspect's name), then its reason, then its score."""
    return closed_object({**before, "reason": {"type": "string"}, "score": score_schema()})


def dimensions_reply(dimensions: dict[str, Any], text: str, overall: str) -> dict[str, Any]:
    """A reply that scores dimensions and then the whole: the `dimensions` schema, a free-text field named
    `text` (the overall reason, or how the dimensions were combined), and the overall score described as
    `overall`."""
    return closed_object({"dimensions": dimensions, text: {"type": "string"}, "score": score_schema(overall)})


def scored_leaf(entry: dict[str, Any], name: str, where: str, node: str | None = None) -> LeafResult:
    """The leaf of a reply entry `{reason, score}`; a score off the scale is a ReplyError naming `where`."""
    value = valid_score(entry.get("score"), where)
    return LeafResult(name=name, node=node, score=float(value), raw_score=value, reason=str(entry.get("reason", "")))
