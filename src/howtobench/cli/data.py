"""`howtobench data ...`: look at the benchmark (`stats`) and fetch it (`download`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from howtobench.cli.help_groups import command_group
from howtobench.config import resolve_data_dir, user_cache_dir
from howtobench.data.genres import GENRES
from howtobench.data.release import ReleaseCheck
from howtobench.data.stats import BenchStats, GroupStats, benchmark_stats
from howtobench.report.formats import output_format
from howtobench.report.tables import Document, Table, show

from .options import DataOpt, FormatOpt, NoProgressOpt, StrictOpt

data_app = command_group("data", "The HoWToBench data: where it is, what is in it, how to fetch it.")


def register(app: typer.Typer) -> None:
    """Attach the `data` sub-commands to the main app."""
    app.add_typer(data_app, name="data")


@data_app.command("stats")
def stats_cmd(data: DataOpt = None, fmt: FormatOpt = "table",
              strict: StrictOpt = False) -> None:
    """Show the shape of the benchmark: instructions and text lengths per task and genre, writings per model."""
    root = resolve_data_dir(data)
    result = benchmark_stats(root, strict=strict)
    split = output_format(fmt).for_machines  # mean and median in columns of their own, for a program or sheet
    tables = [_group_table("Instructions per task", "task", result.tasks, split)]
    for task, genres in result.genres.items():
        rows = {f"{g} ({GENRES[g].zh})" if g in GENRES else g: s for g, s in genres.items()}
        tables.append(_group_table(f"Genres — {task}", "genre", rows, split))
    tables.append(_model_table(result))
    if result.release is not None:
        tables.append(_release_table(result.release))
    console = Console()
    show(Document(list(tables), data=result.model_dump(mode="json")), fmt, console)  # JSON: the full record
    _print_problems(Console(stderr=True) if split else console, result)  # stdout stays parseable


def _group_table(title: str, key: str, groups: dict[str, GroupStats], split: bool = False) -> Table:
    """Lengths as "mean / median" for reading, or (`split`) as separate numeric mean and median columns."""
    texts = ("instruction", "information", "reference")
    stats = [f"{c} chars {m}" for c in texts for m in ("mean", "median")] if split else \
        [f"{c} chars mean / median" for c in texts]
    table = Table(title, [key, "instructions", *stats], digits=1)
    for name, s in groups.items():
        lengths = (s.instruction_chars, s.information_chars, s.reference_chars)
        cells = [v for ln in lengths for v in (ln.mean, ln.median)] if split else \
            [f"{ln.mean:,.0f} / {ln.median:,.0f}" for ln in lengths]
        table.add_row(name, s.instructions, *cells)
    return table


def _model_table(result: BenchStats) -> Table:
    table = Table("Writings per model", ["task", "model", "writings", "empty", "mean chars"])
    for task, models in result.models.items():
        for model, s in models.items():
            table.add_row(task, model, s.writings, s.empty, round(s.mean_chars))
    return table


def _release_table(check: ReleaseCheck) -> Table:
    """Every release file's sha256 and whether it is the pinned release's."""
    verdict = "as pinned" if check.pinned else "not checked (not the pinned commit)"
    table = Table(f"Release files, {check.repository}@{check.commit}", ["file", "sha256", "pinned sha256"])
    for rel, digest in check.sha256.items():
        table.add_row(rel, digest, "DIFFERS" if rel in check.mismatched else verdict)
    return table


def _print_problems(console: Console, result: BenchStats) -> None:
    check = result.release
    if check is not None:
        line = (f"release {check.repository}@{check.commit}: {len(check.sha256)} files hashed, "
                f"{len(check.mismatched)} differ from the pinned sha256, {len(check.missing)} missing")
        console.print(line if check.pinned else f"{line} (a --ref download: its hashes are not checked)",
                      highlight=False)
    if result.unmapped_genre:
        labels = ", ".join(f"{k} ({v})" for k, v in result.unmapped_labels.items())
        console.print(f"[yellow]{result.unmapped_genre} instructions with an unmapped genre label:[/] {labels}")
    else:
        console.print("every sub_task label maps to a genre")
    for line in result.skipped:
        console.print(f"[yellow]{line}[/]", highlight=False)


DestOpt = Annotated[
    Path | None,
    typer.Option("--dest", help="Folder to download into. Default: the per-user cache that --data falls back to."),
]


ReleaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="A mirror of the release's data/ folder (LICENSE beside it). Default: GitHub at "
                 "the pinned commit. The files must still match the pinned sha256 unless --ref says otherwise."),
]
RefOpt = Annotated[
    str | None,
    typer.Option("--ref", help="Take the release at this commit (or branch) of the repository instead of the "
                 "pinned one; the package ships no sha256 for it, so its hashes are recorded in manifest.json, "
                 "not checked."),
]


@data_app.command("download")
def download_cmd(
    dest: DestOpt = None,
    release_url: ReleaseUrlOpt = None,
    ref: RefOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Fetch every file again, even verified ones.")] = False,
    no_progress: NoProgressOpt = False,
) -> None:
    """Fetch the public HoWToBench release into the per-user cache, verify it, and write a manifest.

    The release is pinned to one commit of the authors' repository and every file must match the sha256 shipped
    with this package, so an upstream change cannot silently change the benchmark. Safe to run again: files that
    are present and verified are not fetched twice.
    """
    # The parameter is not named base_url: that name marks a model-calling command, which would grow the model
    # endpoint's flags (--reasks, --response-format, ...) here (options.add_endpoint_settings).
    from howtobench.data.download import download_release
    from howtobench.data.release import REPOSITORY

    target = dest if dest is not None else user_cache_dir() / "data"
    result = download_release(target, release_url, ref=ref, force=force, progress=not no_progress)
    checked = ("every file matches its shipped sha256" if result.checked else
               "not the pinned commit: sha256 recorded in the manifest, not checked")
    typer.echo(
        f"{len(result.fetched)} files fetched, {len(result.skipped)} already verified; "
        f"benchmark ready in {target} (manifest: {result.manifest})\n"
        f"release {REPOSITORY}@{result.commit}: {checked}"
    )
