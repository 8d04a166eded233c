"""`howtobench perturb` as a library call: one kind, one seed, one input file -> perturbed writings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress

from howtobench.config import EndpointConfig
from howtobench.data.loader import LoadReport, load_items, load_release_writings, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.llm.client import CacheMode
from howtobench.robustness.apply import check_kinds, perturb_writings
from howtobench.robustness.files import (
    Contexts,
    failures_path,
    is_judgment_file,
    write_writings,
    writings_for_judgments,
)
from howtobench.robustness.transfer import TRANSFER_KINDS
from howtobench.session import optional_client


@dataclass(frozen=True)
class PerturbSummary:
    """What a perturb run wrote."""

    kind: str
    written: int
    failed: int
    out: Path
    failures_out: Path | None
    skipped_rows: tuple[str, ...] = ()


def load_sources(source: Path, data_root: Path | None, report: LoadReport) -> tuple[list[Writing], dict[str, Item]]:
    """The writings to perturb and the items known for them (empty without a benchmark)."""
    items = {it.id: it for it in load_items(data_root, report=report)} if data_root else {}
    if is_judgment_file(source):
        if data_root is None:
            raise ConfigError(f"{source} is a judgment file: pass --data so the judged texts can be found")
        release = load_release_writings(data_root, items=list(items.values()), report=report)
        return writings_for_judgments(source, release), items
    return load_writings_file(source, items or None, report=report), items


async def perturb_file(
    source: Path,
    kind: str,
    seed: int,
    out: Path,
    *,
    data_root: Path | None = None,
    endpoint: EndpointConfig | None = None,
    workspace: Path,
    cache_mode: CacheMode = "on",
    progress: bool = True,
    prices: Path | None = None,
) -> PerturbSummary:
    """Perturb every writing of `source` with `kind` and write them to `out` (failures beside it)."""
    check_kinds([kind])
    report = LoadReport()
    writings, items = load_sources(source, data_root, report)
    if kind == "reference" and not items:
        raise ConfigError("the reference control needs the benchmark's references: pass --data")
    async with optional_client(kind in TRANSFER_KINDS, endpoint, workspace=workspace, cache_mode=cache_mode,
                               prices=prices) as client:
        with Progress(disable=not progress) as bar:
            task = bar.add_task(f"perturb · {kind}", total=len(writings))
            done, failed = await perturb_writings(
                writings, kind, seed, Contexts(items), client, on_done=lambda: bar.advance(task)
            )
    write_writings(out, done)
    fail_out = failures_path(out) if failed else None
    if fail_out:
        write_writings(fail_out, failed)
    return PerturbSummary(kind, len(done), len(failed), out, fail_out, tuple(report.summary()))
