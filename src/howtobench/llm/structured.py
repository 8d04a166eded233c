"""Structured replies: ask for JSON, pull it out of the reply, validate it, and word the re-ask.

A reply either validates against the request's JSON schema or the call fails with the raw
text; nothing here ever fills in a value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_validators: dict[str, Draft202012Validator] = {}
Check = Callable[[Any], bool]
_quick: dict[str, Check | None] = {}  # per schema key: its quick check, or None when the schema has no such check


def split_reasoning(text: str) -> tuple[str, str | None]:
    """Separate `<think>…</think>` blocks (reasoning models) from the answer.

    Also handles templates that drop the opening tag (only `</think>` appears) and a reply
    cut off inside its thinking (an unclosed `<think>`: no answer at all).
    """
    parts = _THINK.findall(text)
    answer = _THINK.sub("", text)
    if "</think>" in answer:  # opening tag was part of the prompt template
        head, _, answer = answer.rpartition("</think>")
        parts.insert(0, head)
    if "<think>" in answer:  # truncated while thinking
        answer, _, tail = answer.partition("<think>")
        parts.append(tail)
    reasoning = "\n".join(p.strip() for p in parts if p.strip())
    return answer.strip(), reasoning or None


def response_format(mode: str, schema: dict[str, Any], name: str, *, inline_schema: bool = False
                    ) -> dict[str, Any] | None:
    """The `response_format` body field for the endpoint's declared capability.

    `inline_schema` is the llama-cpp-python dialect: json_object plus a "schema" key, which its
    server turns into a grammar (so an enum-valued score cannot leave its scale).
    """
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema} if inline_schema else {"type": "json_object"}
    return None


def schema_instruction(schema: dict[str, Any]) -> str:
    """Appended when the server cannot enforce the schema itself, so the model still knows the shape."""
    text = json.dumps(schema, ensure_ascii=False)
    return (
        "请只输出一个符合下面 JSON Schema 的 JSON 对象，不要输出其他文字。\n"
        "Reply with a single JSON object that satisfies this JSON schema, and nothing else.\n"
        f"{text}"
    )


def add_instruction(messages: list[dict[str, str]], instruction: str) -> None:
    """Append to the last user turn (many chat templates reject two user turns in a row), else add one."""
    if messages and messages[-1].get("role") == "user":
        messages[-1] = {**messages[-1], "content": f"{messages[-1].get('content', '')}\n\n{instruction}"}
    else:
        messages.append({"role": "user", "content": instruction})


def _candidates(text: str) -> Iterator[str]:
    """The texts a reply's JSON may be, in order; each made only if the ones before it did not parse."""
    yield text.strip()
    for m in _FENCE.findall(text):
        yield m.strip()
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        yield text[start : end + 1]


def extract_json(text: str) -> Any:
    """Parse the JSON object in a reply: the whole text, a fenced block, or the outermost {...}."""
    for candidate in _candidates(text):
        try:
            # strict=False: grammar-constrained local servers emit raw newlines inside strings.
            return json.loads(candidate, strict=False)
        except ValueError:
            continue
    raise ValueError("the reply holds no parseable JSON object")


# The keywords `quick_check` understands; a schema with any other keyword (at any depth) has no quick check.
_QUICK_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "enum", "maxLength",
                             "description", "title"})
_QUICK_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}


def quick_check(schema: Any) -> Check | None:
    """A check that is True only for instances the schema surely accepts, or None for schemas it does not cover.

    Why: jsonschema's general validator costs ~50 us a reply — on a judge of 640 calls/s a tenth of a core. The
    check covers the reply schemas the judges send (objects of typed properties, enums, a maxLength) and is
    stricter than JSON Schema, never looser: types are exact (an integer is an `int`, not `True` or `6.0`), an enum
    value must equal a member of its own type. Whatever it does not accept is validated by jsonschema as before,
    so every verdict and every error message is jsonschema's own.
    """
    if not isinstance(schema, dict) or not set(schema) <= _QUICK_KEYWORDS:
        return None
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _QUICK_TYPES:
        return None
    types = _QUICK_TYPES[kind]
    checks: list[Check] = [lambda x: type(x) in types]
    if "enum" in schema:
        members = schema["enum"]
        if not isinstance(members, list) or not all(type(m) in (int, str) for m in members):
            return None
        checks.append(lambda x: any(type(m) is type(x) and m == x for m in members))
    if "maxLength" in schema:
        limit = schema["maxLength"]
        if kind != "string" or type(limit) is not int:
            return None
        checks.append(lambda x: len(x) <= limit)
    if kind == "object":
        object_check = _object_check(schema)
        if object_check is None:
            return None
        checks.append(object_check)
    elif {"properties", "required", "additionalProperties"} & set(schema):
        return None
    return lambda x: all(check(x) for check in checks)


def _object_check(schema: dict[str, Any]) -> Check | None:
    """The properties / required / additionalProperties part of `quick_check` (additional ones: only `false`)."""
    properties, required = schema.get("properties", {}), schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or closed not in (True, False):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = quick_check(sub)
        if check is None:
            return None
        checks[name] = check

    def accepts(x: dict[str, Any]) -> bool:
        if not all(name in x for name in required):
            return False
        for name, value in x.items():
            check = checks.get(name)
            if check is None:
                if closed is False:
                    return False
            elif not check(value):
                return False
        return True

    return accepts


def validation_error(data: Any, schema: dict[str, Any], schema_key: str) -> str | None:
    """None when `data` satisfies `schema`, else the most relevant error in one line (jsonschema's, unless the
    quick check already knows `data` is valid)."""
    if schema_key not in _quick:
        _quick[schema_key] = quick_check(schema)
    quick = _quick[schema_key]
    if quick is not None and quick(data):
        return None
    validator = _validators.get(schema_key)
    if validator is None:
        validator = _validators[schema_key] = Draft202012Validator(schema)
    error = best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


def parse_reply(answer: str, schema: dict[str, Any], schema_key: str) -> tuple[Any, str | None]:
    """(data, None) when the reply is valid JSON for the schema, else (None, reason)."""
    try:
        data = extract_json(answer)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(data, dict):
        return None, "the reply is JSON but not an object"
    error = validation_error(data, schema, schema_key)
    return (data, None) if error is None else (None, error)


def reask_messages(bad_reply: str, reason: str) -> list[dict[str, str]]:
    """The turn added after an invalid reply: the reply itself, then what was wrong with it."""
    return [
        {"role": "assistant", "content": bad_reply},
        {
            "role": "user",
            "content": (
                f"上面的回复不符合要求（{reason}）。请重新回答，只输出符合 JSON Schema 的 JSON 对象。\n"
                f"The reply above is invalid ({reason}). Answer again with only a JSON object that fits the schema."
            ),
        },
    ]
