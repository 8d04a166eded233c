"""One call for `howtobench analyze length`: load the writings, attach scores, build tables and plots."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from howtobench.data.loader import load_items, load_release_writings, load_writings_file
from howtobench.document import Table
from howtobench.judges.base import Judgment
from howtobench.meta.length import (
    EmptyLengths,
    LengthData,
    attach_scores,
    correlation_table,
    fit_table,
    length_data,
    length_plots,
)


@dataclass
class LengthReport:
    data: LengthData
    tables: list[Table]
    figures: list[Path] = field(default_factory=list)


def analyze_length(
    root: Path,
    *,
    tasks: list[str] | None = None,
    writings_files: list[Path] | None = None,
    results: dict[str, list[Judgment]] | None = None,
    out_dir: Path | None = None,
    strict: bool = False,
    empty: EmptyLengths = "include",
) -> LengthReport:
    """Length statistics of the release writings (or of given writing files), with scores when results are given."""
    items = load_items(root, tasks, strict=strict)
    if writings_files:
        writings = [w for path in writings_files for w in load_writings_file(path, items, strict=strict)]
    else:
        writings = load_release_writings(root, tasks, strict=strict, items=items)
    data = length_data(items, writings, empty=empty)
    results = results or {}
    for label, judgments in results.items():
        attach_scores(data, judgments, suffix="" if len(results) == 1 else f" [{label}]")
    report = LengthReport(data, [fit_table(data), correlation_table(data)])
    if out_dir is not None:
        report.figures = length_plots(data, out_dir)
    return report
