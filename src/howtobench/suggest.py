"""Did-you-mean for names a user types (methods, tasks, genres, config keys, formats)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for the closest known name, else ''; for the end of an error message.

    A name that starts like exactly one known name once case and punctuation are ignored is that one ('gpt4o' ->
    'gpt-4o-2024-11-20': model names carry dates that difflib's ratio counts against a short guess); else difflib.
    """
    names = list(known)
    typed = _squashed(value)
    starting = [name for name in names if typed and _squashed(name).startswith(typed)]
    close = starting if len(starting) == 1 else difflib.get_close_matches(value, names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _squashed(name: str) -> str:
    """Lower-case letters and digits only: how a name is remembered rather than spelled."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def unknown_name(what: str, value: str, known: Iterable[str]) -> str:
    """'unknown WHAT 'value' (did you mean ...?); known: a, b, c' — one message shape everywhere."""
    names = list(known)
    return f"unknown {what} {value!r}{did_you_mean(value, names)}; known: {', '.join(names)}"
