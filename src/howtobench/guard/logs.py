"""The guard's part of every reward answer: the detail of `/v1/score` and the numbers logged per sample.

The logged keys are fixed, like the judge's (serve/answers.py): every signal, `guard/flags` (how many rules flag
the sample) and `guard/skipped` (0/1), NaN where the sample has no guard record (guard off, a rejected label, a
deadline), so OpenRLHF and verl see the same keys in every sample.
"""

from __future__ import annotations

import math
from typing import Any

from howtobench.guard.guard import guard_record, is_skipped
from howtobench.guard.signals import NAMES
from howtobench.judges.base import Judgment

LOG_PREFIX = "guard/"


def guard_detail(judgment: Judgment | None) -> dict[str, Any] | None:
    """The `guard` field of a `/v1/score` result: signals, flags, skipped, and a skip's reason and reward."""
    return guard_record(judgment)


def skip_reason(judgment: Judgment | None) -> str | None:
    """Why the guard answered this sample without a judge call (None: it did not)."""
    record = guard_record(judgment)
    return str(record.get("reason")) if record and is_skipped(judgment) else None


def guard_logs(detail: dict[str, Any] | None, prefix: str) -> dict[str, float]:
    """The guard's numbers of one sample under fixed keys (`prefix` + `guard/<name>`)."""
    signals = (detail or {}).get("signals") or {}
    logs = {f"{prefix}{LOG_PREFIX}{name}": _number(signals.get(name)) for name in NAMES}
    logs[f"{prefix}{LOG_PREFIX}flags"] = math.nan if detail is None else float(len(detail.get("flags") or []))
    logs[f"{prefix}{LOG_PREFIX}skipped"] = math.nan if detail is None else float(bool(detail.get("skipped")))
    return logs


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)
