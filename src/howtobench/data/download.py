"""Fetch the public HoWToBench release, verify it, and record what was fetched.

The release is a fixed list of files (3 tasks x (aligned.jsonl + 10 model files) + LICENSE) in the GitHub
repository ZhuoerFeng/ACL2026-Tree-of-Writing, folder `data/`. Each file is written atomically (temporary
file, then rename) so an interrupted download never leaves a half file that looks complete, and verified by
content: every line a JSON object, and the number of rows the release has. `manifest.json` then records
size and sha256 of each file, so a later run skips files that still match and re-fetches files that changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TransferSpeedColumn,
)

from howtobench.config import proxy_for
from howtobench.errors import DataError
from howtobench.llm.transport import classify, new_session
from howtobench.redact import redact_url

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/ZhuoerFeng/ACL2026-Tree-of-Writing/main/data"
MANIFEST = "manifest.json"
# No limit on the whole transfer (files are tens of MB); a stalled read or a connect that hangs fails.
_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=15.0, sock_read=60.0)
EXPECTED_ROWS: dict[str, int] = {"completion": 379, "guide": 456, "open": 467}
RELEASE_MODELS: tuple[str, ...] = (
    "Llama-3.3-70B-Instruct",
    "claude-3-5-sonnet-20241022",
    "claude-3-haiku-20240307",
    "deepseek-chat",
    "deepseek-r1",
    "doubao-pro-32k-241215",
    "gemini-2.0-flash",
    "glm-4-plus-250111",
    "gpt-4o-2024-11-20",
    "o3-mini-2025-01-31",
)


def release_files() -> list[str]:
    """Relative paths of every file of the release, in download order."""
    files = []
    for task in EXPECTED_ROWS:
        files.append(f"{task}/aligned.jsonl")
        files.extend(f"{task}/inferences/{model}.jsonl" for model in RELEASE_MODELS)
    files.append("LICENSE")
    return files


@dataclass
class DownloadResult:
    """Which files were fetched now and which were already there and verified."""

    dest: Path
    manifest: Path
    fetched: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def verify_file(path: Path, rel: str) -> str | None:
    """Why the file is not a good copy of release file `rel`, or None when it is."""
    if not path.is_file():
        return "missing"
    data = path.read_bytes()
    if not data.strip():
        return "empty"
    if not rel.endswith(".jsonl"):
        return None
    task = rel.split("/", 1)[0]
    rows = 0
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return f"line {lineno} is not valid JSON: {exc}"
        if not isinstance(obj, dict):
            return f"line {lineno} is not a JSON object"
        rows += 1
    expected = EXPECTED_ROWS.get(task)
    if expected is not None and rows != expected:
        return f"{rows} rows, expected {expected}"
    return None


def file_digest(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def read_manifest(dest: Path) -> dict[str, dict[str, Any]]:
    try:
        loaded = json.loads((dest / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    files = loaded.get("files") if isinstance(loaded, dict) else None
    return files if isinstance(files, dict) else {}


def is_current(dest: Path, rel: str, manifest: dict[str, dict[str, Any]]) -> bool:
    """A file may be skipped when its content verifies and it still matches its manifest entry (if any)."""
    path = dest / rel
    if verify_file(path, rel) is not None:
        return False
    recorded = manifest.get(rel)
    return recorded is None or recorded == file_digest(path)


def download_release(
    dest: Path,
    base_url: str = DEFAULT_BASE_URL,
    *,
    force: bool = False,
    progress: bool = True,
) -> DownloadResult:
    """Fetch every release file not already present and verified into `dest`; write `dest/manifest.json`."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(dest)
    result = DownloadResult(dest=dest, manifest=dest / MANIFEST)
    files = release_files()
    todo = [rel for rel in files if force or not is_current(dest, rel, manifest)]
    result.skipped = [rel for rel in files if rel not in todo]
    if todo:
        with _progress(progress) as bars:
            asyncio.run(_fetch_all(base_url, dest, todo, result, bars))
    _write_manifest(dest, base_url, files)
    return result


async def _fetch_all(base_url: str, dest: Path, todo: list[str], result: DownloadResult, bars: Progress) -> None:
    """One aiohttp session (the toolkit's one HTTP stack) for the whole download, one file at a time."""
    async with new_session() as http:
        bar = bars.add_task("", total=None)
        for i, rel in enumerate(todo, start=1):
            bars.reset(bar, total=None, description=f"[{i}/{len(todo)}] {rel}")
            await _fetch_one(http, base_url, dest, rel, (bars, bar))
            result.fetched.append(rel)


async def _fetch_one(http: aiohttp.ClientSession, base_url: str, dest: Path, rel: str,
                     bar: tuple[Progress, TaskID]) -> None:
    """Stream one file to a temporary sibling, verify it, then rename it into place."""
    url = f"{base_url.rstrip('/')}/{rel}"
    target = dest / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            await _stream(http, url, out, bar)
        problem = verify_file(tmp, rel)
        if problem is not None:
            raise DataError(f"downloaded {redact_url(url)} but it does not verify: {problem}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


async def _stream(http: aiohttp.ClientSession, url: str, out: BinaryIO, bar: tuple[Progress, TaskID]) -> None:
    bars, task = bar
    try:
        async with http.get(url, timeout=_TIMEOUT, proxy=proxy_for(url)) as resp:
            if resp.status != 200:
                raise DataError(
                    f"cannot download {redact_url(url)}: HTTP {resp.status} {resp.reason} (check --base-url)"
                )
            compressed = resp.headers.get("Content-Encoding", "identity") != "identity"
            bars.update(task, total=None if compressed else resp.content_length)
            async for chunk in resp.content.iter_chunked(1 << 16):
                out.write(chunk)
                bars.advance(task, len(chunk))
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
        # the cause names the URL already; say what a user without network can do instead
        raise DataError(f"cannot download the release: {classify(exc, url, 60.0)} (no network here? copy its "
                        "data/ folder by other means and point --data or HOWTOBENCH_DATA at it)") from None


def _write_manifest(dest: Path, base_url: str, files: list[str]) -> None:
    """Record size and sha256 of every present file, atomically, after the downloads."""
    digests = {rel: file_digest(dest / rel) for rel in files if (dest / rel).is_file()}
    body = {"base_url": redact_url(base_url), "files": digests}
    fd, tmp = tempfile.mkstemp(dir=dest, prefix=".manifest.", suffix=".part")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(body, out, indent=2, sort_keys=True)
    os.replace(tmp, dest / MANIFEST)


@contextmanager
def _progress(show: bool) -> Iterator[Progress]:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
    )
    with Progress(*columns, disable=not show, transient=False) as bars:
        yield bars
