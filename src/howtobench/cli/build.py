"""`howtobench build ...`: make a benchmark of your own from human-written texts (paper 4.2-4.6).

Steps, each reading the previous step's file in the build directory (`--dir`) and writing its own, so a
user can stop after any step, inspect or correct the file by hand, and go on:
ingest -> classify -> filter -> make -> export -> (edit) -> import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.construct.ingest import IngestLimits, IngestReport, ingest

console = Console()

DirOpt = Annotated[
    Path,
    typer.Option("--dir", help="Build directory holding one JSONL file per step (created if missing)."),
]


def _print_ingest(report: IngestReport) -> None:
    console.print(
        f"read {report.read} texts, kept {report.kept} "
        f"(zh {report.by_language.get('zh', 0)}, en {report.by_language.get('en', 0)}); dropped: "
        f"{report.already_present} already in the build, {report.exact_duplicates} exact and "
        f"{report.near_duplicates} near duplicates, {report.too_short} too short, {report.too_long} too long, "
        f"{report.empty} empty",
        highlight=False,
    )
    if report.bad_rows:
        console.print(f"[yellow]skipped {len(report.bad_rows)} bad input rows:[/]")
        for line in report.bad_rows[:20]:
            console.print(f"  {line}", markup=False, highlight=False)


def ingest_cmd(
    inputs: Annotated[list[Path], typer.Argument(help="Folders of .txt/.md files, .txt/.md files, or .jsonl files "
                                                      "with text, source and license per line.", exists=True)],
    build_dir: DirOpt,
    license: Annotated[str, typer.Option("--license", help="License recorded for texts from files, and for "
                                                          "JSONL rows without one.")] = "unknown",
    min_chars: Annotated[int, typer.Option("--min-chars", min=1, help="Drop texts shorter than this many "
                                                                      "non-whitespace characters.")] = 200,
    max_chars: Annotated[int, typer.Option("--max-chars", min=1, help="Drop texts longer than this many "
                                                                      "non-whitespace characters.")] = 20000,
    language: Annotated[str, typer.Option("--language", help="auto (zh when CJK > 30% of letters, else en), "
                                                             "zh or en.")] = "auto",
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first bad JSONL row instead of skipping "
                                                          "and counting it.")] = False,
) -> None:
    """Step 1: read texts, drop duplicates (exact and 5-gram Jaccard >= 0.9) and out-of-range lengths."""
    if language not in ("auto", "zh", "en"):
        raise typer.BadParameter("must be auto, zh or en", param_hint="--language")
    report = ingest(inputs, build_dir, license=license, limits=IngestLimits(min_chars, max_chars),
                    language=language, strict=strict)  # type: ignore[arg-type]
    _print_ingest(report)


def register(app: typer.Typer) -> None:
    """Add the `build` sub-app to the main command."""
    build = typer.Typer(name="build", no_args_is_help=True, help=__doc__)
    build.command("ingest")(ingest_cmd)
    app.add_typer(build, name="build")
