"""What an HTML report is made from: judgment files, a run directory's manifest and writings, the benchmark.

`howtobench report` accepts judgment JSONL files and run directories (the layout of `howtobench.run`) in any
mix. A run directory contributes `judgments/*.jsonl`, its writings (`run_writing_files`) and `manifest.json`;
its manifest also names the benchmark folder, so the judgment explorer can show each instruction and the
shipped writings without a `--data` flag. Nothing here calls a model.

The manifest is shown to readers, so it passes through `scrub` first: entries whose key names a secret are
dropped and values that look like API keys or bearer tokens are masked, even though the run never writes one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.config import optional_data_dir
from howtobench.data.loader import INFERENCES_DIR, load_items, load_writings_file, release_models
from howtobench.data.models import TASKS, Item, Writing
from howtobench.errors import DataError

SECRET_KEYS = frozenset({"api_key", "apikey", "authorization", "password", "secret", "token", "access_token"})
SECRET_VALUE = re.compile(r"^\s*(bearer\s+\S+|(sk|rk|pk)-[A-Za-z0-9_\-]{8,})", re.IGNORECASE)
MASK = "[redacted]"


@dataclass(frozen=True)
class ReportSources:
    """The files a report reads, sorted out from the command-line paths."""

    judgment_files: tuple[Path, ...]
    writing_files: tuple[Path, ...] = ()
    run_dir: Path | None = None
    manifest: dict[str, Any] | None = None
    run_config: dict[str, Any] | None = None


def find_sources(paths: Sequence[Path]) -> ReportSources:
    """Judgment files as given; a directory is read as a run directory (at most one, it owns the manifest)."""
    judgment_files: list[Path] = []
    writing_files: list[Path] = []
    run_dirs = [p for p in paths if p.is_dir()]
    if len(run_dirs) > 1:
        raise DataError(f"one run directory per report, got {len(run_dirs)}: {', '.join(map(str, run_dirs))}")
    for path in paths:
        if path.is_dir():
            found = sorted((path / "judgments").glob("*.jsonl"))
            if not found:
                raise DataError(f"{path} is not a run directory with judgments/*.jsonl")
            judgment_files += found
            writing_files += run_writing_files(path)
        elif path.is_file():
            judgment_files.append(path)
        else:
            raise DataError(f"no such results file or run directory: {path}")
    run_dir = run_dirs[0] if run_dirs else None
    return ReportSources(
        judgment_files=tuple(judgment_files),
        writing_files=tuple(writing_files),
        run_dir=run_dir,
        manifest=_read_json(run_dir / "manifest.json") if run_dir else None,
        run_config=_read_yaml(run_dir / "config.yaml") if run_dir else None,
    )


def run_writing_files(run_dir: Path) -> list[Path]:
    """A run's writings: generated ones (`writings/*.jsonl`, not the `.failed.jsonl` lists of failed calls)
    and the copies of the user's --writings files (`writings/given/*.jsonl`)."""
    folder = run_dir / "writings"
    found = sorted(folder.glob("*.jsonl")) + sorted((folder / "given").glob("*.jsonl"))
    return [p for p in found if not p.name.endswith(".failed.jsonl")]


def _read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read run manifest {path}: {exc}") from exc
    return scrub(data) if isinstance(data, dict) else None


def _read_yaml(path: Path) -> dict[str, Any] | None:
    import yaml

    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"cannot read run config {path}: {exc}") from exc
    return scrub(data) if isinstance(data, dict) else None


def scrub(value: Any) -> Any:
    """A copy without secrets: secret-named keys dropped, key-like strings masked (recursively)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if str(k).lower() not in SECRET_KEYS}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and SECRET_VALUE.match(value):
        return MASK
    return value


def data_dir_for(sources: ReportSources, flag: Path | None) -> Path | None:
    """The benchmark folder: the --data flag, else the one the run's manifest names (when it still exists), else
    $HOWTOBENCH_DATA or the per-user cache, as every command finds it (`config.optional_data_dir`)."""
    if flag is not None:
        return flag
    named = ((sources.manifest or {}).get("data") or {}).get("dir")
    if isinstance(named, str) and Path(named).is_dir():
        return Path(named)
    return optional_data_dir(None)


def load_report_items(data_dir: Path | None, tasks: Iterable[str]) -> list[Item] | None:
    """The benchmark items of the judged tasks, or None without a benchmark folder."""
    if data_dir is None:
        return None
    chosen = [t for t in TASKS if t in set(tasks)]
    return load_items(data_dir, chosen) if chosen else []


def load_given_writings(paths: Sequence[Path], judged: set[tuple[str, str]]) -> list[Writing]:
    """The user's --writings files, each checked to answer at least one judged (item id, model) pair.

    A file that answers none is the wrong file or a model named differently from its judgments: said here, instead
    of a report whose explorer quietly shows no text of it.
    """
    given: list[Writing] = []
    for path in paths:
        writings = load_writings_file(path)
        if not any((w.item_id, w.model) in judged for w in writings):
            raise DataError(
                f"{path}: none of its {len(writings)} writings was judged in the given results (its models: "
                f"{_names({w.model for w in writings})}; judged models: {_names({m for _, m in judged})})"
            )
        given += writings
    return given


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def load_report_writings(
    sources: ReportSources, data_dir: Path | None, wanted: set[tuple[str, str]], items: Sequence[Item] | None,
    given: Iterable[Writing] = (),
) -> dict[tuple[str, str], str]:
    """Texts of the wanted (item id, model) writings: the user's `given` ones first (named on the command line),
    then the run's own files, then the release's."""
    texts: dict[tuple[str, str], str] = {}

    def take(writings: Iterable[Writing]) -> None:
        for w in writings:
            key = (w.item_id, w.model)
            if key in wanted and key not in texts:
                texts[key] = w.output

    take(given)
    for path in sources.writing_files:
        take(load_writings_file(path))
    if data_dir is not None and items is not None:
        models = {model for _, model in wanted}
        ids = {item_id for item_id, _ in wanted}
        tasks = sorted({it.task for it in items if it.id in ids})
        for task in tasks:
            for model in sorted(models & set(release_models(data_dir, task))):
                take(load_writings_file(data_dir / task / INFERENCES_DIR / f"{model}.jsonl"))
    return texts
