"""Read stored judgment files (one `Judgment` JSON per line) for the analyses.

Meta-evaluation never calls a model: every number comes from these files. A bad line is a
`RowError` naming file and line; with `strict=False` it is skipped and counted instead, so one
torn line at the end of an interrupted run does not hide the rest.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from howtobench.data.rows import read_model_rows
from howtobench.errors import RowError
from howtobench.judges.base import Judgment


@dataclass
class SkipReport:
    """Rows skipped in non-strict mode, with the reason for each."""

    skipped: list[RowError] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.skipped)


def load_judgments(path: Path, *, strict: bool = False, report: SkipReport | None = None) -> list[Judgment]:
    """All judgments in a JSONL file, in file order."""
    return read_model_rows(path, Judgment, "judgment", strict=strict,
                           skipped=report.skipped if report is not None else None)


def by_method(judgments: list[Judgment], label: str | None = None) -> dict[str, list[Judgment]]:
    """Split one file's judgments by method; `label` renames a single-method file (e.g. 'ToW (gpt-4o)')."""
    groups: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        groups[j.method].append(j)
    if label is not None and len(groups) == 1:
        return {label: next(iter(groups.values()))}
    return dict(groups)


def load_results(paths: list[Path], *, strict: bool = False) -> dict[str, list[Judgment]]:
    """Judgments of several files grouped by method; the same method in two files gets the file stem appended."""
    merged: dict[str, list[Judgment]] = {}
    for path in paths:
        for method, js in by_method(load_judgments(path, strict=strict)).items():
            label = with_reference_source(method, js)
            name = label if label not in merged else f"{label} ({path.stem})"
            merged[name] = js
    return merged


def with_reference_source(method: str, judgments: list[Judgment]) -> str:
    """The method's row name, with the reference source when it is not the human one (Table 12: one row per
    reference source), e.g. "tow (reference model:deepseek-chat)"."""
    sources = sorted({j.reference_source for j in judgments if j.reference_source not in (None, "human")})
    return f"{method} (reference {', '.join(sources)})" if sources else method
