"""What a job asks, beyond where it writes: its settings, its selection and a digest of the data it reads.

Why: a job's output path alone does not say which job it is. A batch export made with `--subset 24` and an import
run without it name the same output, yet ask for different calls: taking the import as the same job wrote a
"round 2" of every call of the release (82,952 calls, 1 GB) without a word. So a batch-files job is keyed by its
output *and* `JobIdentity.digest`; an import whose identity differs from the export's stops before anything is
stored, naming what differs and the export's own command line with `--batch-import`. Shards use the same data
digest, so one data set reached through two paths is one job (`steps/shards.py`).

The data digest is of the content the job reads (the selected items and writings, in order), never of a path.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.data.models import Item, Writing
from howtobench.redact import redact_text

EXPORT_FLAG = "--batch-export"
IMPORT_FLAG = "--batch-import"


def digest_of(value: Any) -> str:
    """sha256 of a JSON-able value, independent of key order."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def data_digest(items: Iterable[Item], writings: Iterable[Writing] = ()) -> str:
    """sha256 of the items' and writings' content, in the order given (what the job reads, wherever it lies)."""
    hasher = hashlib.sha256()
    for item in items:
        hasher.update(b"item\0" + item.model_dump_json(by_alias=True).encode("utf-8") + b"\0")
    for writing in writings:
        hasher.update(b"writing\0" + writing.model_dump_json(by_alias=True).encode("utf-8") + b"\0")
    return hasher.hexdigest()


def pairs_digest(pairs: Sequence[tuple[Item, Writing]]) -> str:
    """The data digest of (item, writing) pairs: each item once (in first-seen order), then every writing."""
    items = {item.id: item for item, _ in pairs}
    return data_digest(items.values(), (writing for _, writing in pairs))


def files_digest(paths: Iterable[Path]) -> str:
    """sha256 of the files' bytes (a user's writings files), in the order given; a missing file counts as empty."""
    hasher = hashlib.sha256()
    for path in paths:
        hasher.update(b"file\0")
        if path.is_file():
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    hasher.update(block)
    return hasher.hexdigest()


def this_command() -> str | None:
    """The howtobench command line this process runs (redacted), or None when it is not the CLI (an API caller)."""
    program = Path(sys.argv[0]) if sys.argv else Path()
    if program.name != "howtobench" and (program.name, program.parent.name) != ("__main__.py", "howtobench"):
        return None
    return redact_text(shlex.join(["howtobench", *sys.argv[1:]]))


@dataclass(frozen=True)
class JobIdentity:
    """What a job asks: `settings` (JSON-able: method, models, options, selection, data digest) and the command
    line that made it (None outside the CLI)."""

    settings: Mapping[str, Any]
    command: str | None = None

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> JobIdentity:
        return cls(json.loads(json.dumps(dict(settings), sort_keys=True, default=str)), this_command())

    @property
    def digest(self) -> str:
        return digest_of(self.settings)


def differences(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between two identities' settings, one phrase per key, e.g. `subset: 24 at the export, none
    now`; the data (a content digest) last."""
    out = []
    for key in sorted({*before, *now}, key=lambda k: (k == "data", k)):
        if before.get(key) == now.get(key):
            continue
        if key == "data":
            out.append("the data (its content digest differs: other items or writings)")
        else:
            out.append(f"{key}: {_shown(before.get(key))} at the export, {_shown(now.get(key))} now")
    return out


def _shown(value: Any) -> str:
    if value is None or value == [] or value == ():
        return "none"
    return json.dumps(value, ensure_ascii=False, default=str)


def import_command(export_command: str | None, imports: Sequence[Path]) -> str | None:
    """The export's command line with `--batch-import IMPORTS` in place of its `--batch-export FILE`."""
    if export_command is None:
        return None
    words = shlex.split(export_command)
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word == EXPORT_FLAG:
            skip = True
            continue
        if word.startswith(EXPORT_FLAG + "="):
            continue
        out.append(word)
    return shlex.join([*out, IMPORT_FLAG, *(str(p) for p in imports)])
