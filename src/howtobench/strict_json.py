"""JSON from outside (request bodies, labels, batch output lines) read strictly: only what RFC 8259 allows, and
no deeper than anything we read needs.

Why: Python's `json.loads` takes `NaN`, `Infinity` and `-Infinity` (not JSON; a `deadline_s` of NaN answered every
sample at once as "not judged within nan s" while the judgment was still paid), reads `1e999` as infinity, and
recurses once per level of nesting — a 100,000-deep body was a 500 and a `RecursionError` on the server's stderr.
`loads` refuses all of that with a `ValueError` whose message says what is wrong, for the caller's one line (a 400
naming the field, an error naming file and line).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64  # levels of arrays and objects; the deepest thing we read (an OpenAI batch line) needs about 6


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (numbers must be finite)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is too large to be finite")
    return value


def loads(data: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `data` (bytes must be UTF-8), or ValueError: not UTF-8, not JSON, NaN / Infinity, a number
    that overflows to infinity, or nested deeper than `max_depth`."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None
    try:
        value = json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    if depth(value) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return value


def depth(value: Any) -> int:
    """Levels of arrays and objects in a parsed value (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def is_number(value: Any) -> bool:
    """A JSON number as a field's value: an int or a finite float, never a boolean (True is an int in Python)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
