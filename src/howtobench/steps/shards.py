"""Shards: one job split by item over N machines or array tasks, each into its own output, and `merge` to join them.

    howtobench judge ... --shard 2/4 -o tow.part2.jsonl       # on machine 2 of 4 (or SLURM_ARRAY_TASK_ID=2)
    howtobench merge tow.part*.jsonl -o tow.jsonl

The split is deterministic: the job's selected items in their order, item k to shard (k mod N) + 1, so every
writing of an item (and the item's one weight negotiation) is in one shard, and shards differ in size by at most
one item. Each part writes `<out>.shard.json` beside its output when it starts: its shard, the job's settings
(`job`: what must be equal between parts), the whole selection's items and the keys its own output must hold.
`merge` checks the parts against those (same settings, every shard once, no key in two parts, every key there)
and writes one output in the unsharded job's order: the rows are the parts' rows, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from howtobench.errors import ConfigError, DataError
from howtobench.outputs import write_text_atomic

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as `--shard 2/4` and Slurm's array task ids from 1)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            index, count = (int(part) for part in text.split("/"))
        except ValueError:
            raise ConfigError(f"--shard {text!r}: expected I/N, e.g. 2/4 (part 2 of 4)") from None
        if not 1 <= index <= count:
            raise ConfigError(f"--shard {text!r}: I must be between 1 and N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def items(self, item_ids: Sequence[str]) -> set[str]:
        """The items of this shard among the selection's `item_ids` (in selection order, each once)."""
        return {item for k, item in enumerate(dict.fromkeys(item_ids)) if k % self.count == self.index - 1}

    def pick(self, rows: Sequence[T], item_of: Callable[[T], str]) -> list[T]:
        """The rows of this shard's items, in their order."""
        mine = self.items([item_of(r) for r in rows])
        return [r for r in rows if item_of(r) in mine]


def sidecar_path(out: Path) -> Path:
    return out.with_name(out.name + ".shard.json")


def write_sidecar(out: Path, shard: Shard, kind: str, job: dict[str, Any], selection: Sequence[str],
                  keys: Sequence[Sequence[str]]) -> None:
    """Record what part `out` is: `kind` of rows, the job's settings, the whole selection, its own keys."""
    record = {"shard": [shard.index, shard.count], "kind": kind, "job": job,
              "selection": list(dict.fromkeys(selection)), "keys": [list(k) for k in keys]}
    write_text_atomic(sidecar_path(out), json.dumps(record, ensure_ascii=False, indent=1) + "\n")


@dataclass(frozen=True)
class Part:
    path: Path
    shard: Shard
    kind: str
    job: dict[str, Any]
    selection: list[str]
    keys: list[tuple[str, ...]]


def read_part(path: Path) -> Part:
    side = sidecar_path(path)
    try:
        record = json.loads(side.read_text(encoding="utf-8"))
        return Part(path, Shard(*record["shard"]), record["kind"], record["job"], record["selection"],
                    [tuple(k) for k in record["keys"]])
    except FileNotFoundError:
        raise DataError(f"{path} is no shard output: {side} is missing (a part is written by a command run with "
                        "--shard I/N)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{side}: not a shard record ({exc})") from exc


def check_parts(parts: Sequence[Part]) -> None:
    """Every part of one job, each shard once, with the same settings; raises naming the part that differs."""
    first = parts[0]
    for part in parts[1:]:
        if part.kind != first.kind or part.job != first.job or part.selection != first.selection:
            changed = sorted(k for k in {*part.job, *first.job} if part.job.get(k) != first.job.get(k))
            what = ", ".join(changed) or ("the kind of rows" if part.kind != first.kind else "the selected items")
            raise DataError(f"{part.path} is a part of another job than {first.path} ({what} differ)")
        if part.shard.count != first.shard.count:
            raise DataError(f"{part.path} is shard {part.shard} but {first.path} is shard {first.shard}")
    by_index: dict[int, Path] = {}
    for part in parts:
        if part.shard.index in by_index:
            raise DataError(f"shard {part.shard} is given twice: {by_index[part.shard.index]} and {part.path}")
        by_index[part.shard.index] = part.path
    missing = [str(i) for i in range(1, first.shard.count + 1) if i not in by_index]
    if missing:
        raise DataError(f"shard(s) {', '.join(missing)} of {first.shard.count} missing: merge needs every part")


def merge_rows(parts: Sequence[Part], rows_of: Callable[[Path], dict[tuple[str, ...], str]]) -> list[str]:
    """The parts' rows (each row's text as read) in the unsharded job's order: by item in selection order, then
    in each part's key order; a key in two parts or missing from its part is an error naming the part."""
    check_parts(parts)
    owner: dict[tuple[str, ...], Path] = {}
    found: dict[tuple[str, ...], str] = {}
    for part in parts:
        rows = rows_of(part.path)
        for key in rows:
            if key in owner:
                raise DataError(f"{' / '.join(key)} is in two parts: {owner[key]} and {part.path}")
            owner[key] = part.path
        lacking = [k for k in part.keys if k not in rows]
        if lacking:
            raise DataError(f"{part.path} lacks {len(lacking)} of its {len(part.keys)} rows (e.g. "
                            f"{' / '.join(lacking[0])}): run its command again to finish that part")
        extra = set(rows) - set(part.keys)
        if extra:
            raise DataError(f"{part.path} holds {len(extra)} rows outside its shard (e.g. "
                            f"{' / '.join(sorted(extra)[0])}): it was written by another job too")
        found.update(rows)
    order = {item: k for k, item in enumerate(parts[0].selection)}
    keys = [k for part in sorted(parts, key=lambda p: p.shard.index) for k in part.keys]
    keys.sort(key=lambda k: order[k[0]])  # stable: within an item, the part's own key order
    return [found[k] for k in keys]


def _judgment_rows(path: Path) -> dict[tuple[str, ...], str]:
    from howtobench.judges.runner import read_judgments

    return {(j.item_id, j.model): j.model_dump_json() for j in read_judgments(path).values()}


def _writing_rows(path: Path) -> dict[tuple[str, ...], str]:
    from howtobench.data.rows import read_appended_rows

    rows = read_appended_rows(path, json.loads, "JSON", repair=False)
    return {(str(row["infer_id"]),): json.dumps(row, ensure_ascii=False) for _, row in rows}


ROWS_OF: dict[str, Callable[[Path], dict[tuple[str, ...], str]]] = {"judgments": _judgment_rows,
                                                                    "writings": _writing_rows}


def merge_outputs(paths: Sequence[Path], out: Path) -> tuple[str, int]:
    """Check the parts `paths` and write their rows to `out` as one output; returns (kind of rows, count)."""
    if not paths:
        raise ConfigError("merge needs the parts to join")
    parts = [read_part(p) for p in paths]
    if out.resolve() in {p.resolve() for p in paths}:
        raise ConfigError(f"{out} is one of the parts: write the merged output elsewhere")
    lines = merge_rows(parts, ROWS_OF[parts[0].kind])
    write_text_atomic(out, "".join(line + "\n" for line in lines))
    return parts[0].kind, len(lines)
