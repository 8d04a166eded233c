"""A rating study: its folder, its settings and the writings it shows, fixed when it is created.

`prepare_study` creates the study from writing files on the first `rate serve` and reopens it afterwards.
The items (instruction, grounding, reference) and writings are copied into the study file, so the study
keeps showing exactly what its raters rated even if the files change; serving it again with other
writings or other settings is refused rather than mixing two studies. Bad writing rows are collected over
every file and reported together, each with file:line, before anything is written.

Order is seeded (`--seed`): the instructions in a shuffled order, and within each instruction the
responses A, B, C... in a shuffled order of models, both reproducible from the seed and the item id.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from howtobench.data.loader import LoadReport, load_items, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError, DataError
from howtobench.judges.tree import Tree, load_tree
from howtobench.rate.protocol import MODES, Mode, Protocol
from howtobench.rate.security import cookie_name
from howtobench.rate.store import DB_NAME, StoredWriting, StudyStore, now
from howtobench.version import __version__

MAX_LISTED_ERRORS = 20


@dataclass(frozen=True)
class StudySettings:
    """How a study runs; fixed at creation."""

    mode: Mode = "metaeditor"
    raters_per_writing: int = 2
    seed: int = 0
    tree: str = "default"
    """Tree name or YAML path whose leaves a `tow` study rates (ignored in `metaeditor` mode)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown study mode {self.mode!r} (expected one of {', '.join(MODES)})")
        if self.raters_per_writing < 1:
            raise ConfigError("--raters-per-writing must be at least 1")


@dataclass
class Study:
    """An open study: its store, settings and rating rules."""

    folder: Path
    store: StudyStore
    settings: StudySettings
    protocol: Protocol

    def close(self) -> None:
        self.store.close()

    @cached_property
    def cookie(self) -> str:
        """The name of this study's session cookie."""
        return cookie_name(self.store.meta().get("study_id", "study"))


def letter(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: the anonymous name of the index-th response."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def item_order(item_ids: Sequence[str], seed: int) -> list[str]:
    """The seeded order in which raters meet the instructions."""
    ordered = sorted(item_ids)
    rng = np.random.default_rng(seed)
    return [ordered[i] for i in rng.permutation(len(ordered))]


def response_order(item_id: str, models: Sequence[str], seed: int) -> list[str]:
    """The seeded order of one instruction's models: the first is response A."""
    ordered = sorted(models)
    rng = np.random.default_rng([seed, _stable_int(item_id)])
    return [ordered[i] for i in rng.permutation(len(ordered))]


def load_study_writings(paths: Sequence[Path], items: Sequence[Item]) -> list[Writing]:
    """Every writing of the files, or one DataError listing each bad row as file:line (nothing is skipped)."""
    report = LoadReport()
    writings: list[Writing] = []
    where: dict[tuple[str, str], Path] = {}
    problems: list[str] = []
    for path in paths:
        for w in load_writings_file(path, items, report=report):
            first = where.setdefault((w.item_id, w.model), path)
            if first != path:
                problems.append(f"{path}: writing of {w.item_id!r} by {w.model!r} is also in {first}")
                continue
            writings.append(w)
    problems = [str(err) for err in report.errors] + problems
    if problems:
        listed = problems[:MAX_LISTED_ERRORS]
        more = len(problems) - len(listed)
        tail = f"\n  ... and {more} more" if more else ""
        raise DataError(f"{len(problems)} bad writing rows; fix them before rating:\n  " + "\n  ".join(listed) + tail)
    if not writings:
        raise DataError(f"no writings in {', '.join(map(str, paths))}")
    return writings


def _stored_writings(writings: Sequence[Writing], seed: int) -> list[StoredWriting]:
    by_item: dict[str, dict[str, Writing]] = {}
    for w in writings:
        by_item.setdefault(w.item_id, {})[w.model] = w
    out: list[StoredWriting] = []
    for item_id, by_model in by_item.items():
        for i, model in enumerate(response_order(item_id, list(by_model), seed)):
            out.append(StoredWriting(item_id, model, letter(i), by_model[model].output))
    return out


def _protocol(settings: StudySettings, tree_json: str | None) -> Protocol:
    tree = Tree.model_validate_json(tree_json) if tree_json else None
    return Protocol(settings.mode, tree)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def create_study(folder: Path, writing_files: Sequence[Path], data_dir: Path, settings: StudySettings) -> Study:
    """A new study in `folder` from writing files and the benchmark items they answer."""
    items = load_items(data_dir)
    writings = load_study_writings(writing_files, items)
    by_id = {it.id: it for it in items}
    chosen = item_order(sorted({w.item_id for w in writings}), settings.seed)
    tree_json = load_tree(settings.tree).canonical_json() if settings.mode == "tow" else ""
    meta = {
        "settings": json.dumps(asdict(settings)),
        "tree": tree_json,
        "study_id": secrets.token_hex(6),
        "created_at": now(),
        "howtobench": __version__,
        "sources": json.dumps([{"path": str(p), "sha256": _file_digest(p)} for p in writing_files]),
    }
    store = StudyStore(folder / DB_NAME)
    store.initialize(meta, [(pos, by_id[i]) for pos, i in enumerate(chosen)], _stored_writings(writings, settings.seed))
    return Study(folder, store, settings, _protocol(settings, tree_json))


def open_study(folder: Path) -> Study:
    """An existing study (for `rate export`, `rate status` and serving it again)."""
    path = folder / DB_NAME
    if not path.is_file():
        raise DataError(f"no study in {folder} (no {DB_NAME}): start one with `howtobench rate serve --writings FILE "
                        f"--study {folder}`")
    store = StudyStore(path)
    store.check_schema()
    meta = store.meta()
    settings = StudySettings(**json.loads(meta["settings"]))
    return Study(folder, store, settings, _protocol(settings, meta.get("tree") or None))


def prepare_study(
    folder: Path, writing_files: Sequence[Path], data_dir: Path, asked: Mapping[str, Any] | None = None
) -> Study:
    """Create the study, or reopen it after checking it holds the same writings and the settings asked for.

    `asked` holds only the settings the user gave (StudySettings field -> value); the rest keep their
    defaults in a new study and their stored values in an existing one.
    """
    asked = dict(asked or {})
    if not (folder / DB_NAME).is_file():
        if not writing_files:
            raise DataError(f"no study in {folder} yet: pass --writings FILE (repeatable) to create it")
        return create_study(folder, writing_files, data_dir, StudySettings(**asked))
    study = open_study(folder)
    stored = asdict(study.settings)
    changed = sorted(k for k, v in asked.items() if stored.get(k) != v)
    if changed:
        study.close()
        raise ConfigError(f"study {folder} was created with {changed[0]}={stored.get(changed[0])!r}; serve it "
                          "without changing its settings, or use a new --study folder")
    if writing_files:
        _check_same_writings(study, load_study_writings(writing_files, load_items(data_dir)))
    return study


def _check_same_writings(study: Study, writings: Sequence[Writing]) -> None:
    stored = {(w.item_id, w.model): w.output for w in study.store.writings()}
    given = {(w.item_id, w.model): w.output for w in writings}
    if stored == given:
        return
    differ = sorted(k for k in stored.keys() | given.keys() if stored.get(k) != given.get(k))
    item_id, model = differ[0]
    study.close()
    raise DataError(
        f"study {study.folder} holds other writings than the files given ({len(differ)} differ, first: {item_id!r} by "
        f"{model!r}); serve it without --writings to go on, or use a new --study folder"
    )
