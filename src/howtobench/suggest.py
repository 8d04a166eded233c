"""Did-you-mean for names a user types (methods, tasks, genres, config keys, formats)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for the closest known name, else ''; for the end of an error message."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(what: str, value: str, known: Iterable[str]) -> str:
    """'unknown WHAT 'value' (did you mean ...?); known: a, b, c' — one message shape everywhere."""
    names = list(known)
    return f"unknown {what} {value!r}{did_you_mean(value, names)}; known: {', '.join(names)}"
