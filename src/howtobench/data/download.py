"""Fetch the public HoWToBench release, verify it, and record what was fetched.

The release is a fixed list of files (3 tasks x (aligned.jsonl + 10 model files) in the folder `data/`, and the
repository's LICENSE) of the GitHub repository ZhuoerFeng/ACL2026-Tree-of-Writing, pinned to one commit
(`RELEASE_COMMIT`): an upstream change cannot silently change the benchmark under every number. The sha256 of
every file at that commit ships with the package (`release.json`) and each downloaded file must match it;
`--ref COMMIT` takes another commit on purpose (its hashes are then recorded, not checked). Each file is written
atomically (temporary file, then rename) so an interrupted download never leaves a half file that looks complete,
and verified by content too: every line a JSON object, and the number of rows the release has. `manifest.json`
records the commit, size and sha256 of each file, so a later run skips files that still match and re-fetches
files that changed.
"""

from __future__ import annotations

import asyncio
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
from howtobench.data.release import (
    EXPECTED_ROWS,
    MANIFEST,
    RAW_ROOT,
    REPOSITORY,
    file_digest,
    manifest_commit,
    pinned_release,
    read_manifest,
    release_files,
)
from howtobench.errors import DataError
from howtobench.http import classify, new_session
from howtobench.redact import redact_url

# No limit on the whole transfer (files are tens of MB); a stalled read or a connect that hangs fails.
# No limit on the whole transfer (files are tens of MB); a stalled read or a connect that hangs fails.
_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=15.0, sock_read=60.0)


def file_url(rel: str, *, ref: str, base_url: str | None) -> str:
    """Where release file `rel` is fetched: the repository at `ref` (LICENSE at its root, the rest under data/), or
    `base_url`/`rel` for a mirror of the data folder (`--base-url`)."""
    if base_url is not None:
        return f"{base_url.rstrip('/')}/{rel}"
    return f"{RAW_ROOT}/{ref}/{rel if rel == 'LICENSE' else 'data/' + rel}"


@dataclass
class DownloadResult:
    """Which files were fetched now and which were already there and verified, and against what."""

    dest: Path
    manifest: Path
    commit: str = ""
    checked: bool = True  # every file matched the shipped sha256 (False: another --ref, hashes only recorded)
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


def sha256_problem(path: Path, rel: str, expected: dict[str, str] | None) -> str | None:
    """Why the file's sha256 is not the pinned release's (None when it is, or when nothing is expected)."""
    if expected is None:
        return None
    actual = file_digest(path)["sha256"]
    if actual != expected[rel]:
        return f"sha256 {actual[:16]}... is not the release's {expected[rel][:16]}..."
    return None


def is_current(dest: Path, rel: str, manifest: dict[str, dict[str, Any]],
               expected: dict[str, str] | None = None) -> bool:
    """A file may be skipped when its content verifies, matches the pinned sha256 (when checked) and still matches
    its manifest entry (if any)."""
    path = dest / rel
    if verify_file(path, rel) is not None or sha256_problem(path, rel, expected) is not None:
        return False
    recorded = manifest.get(rel)
    return recorded is None or recorded == file_digest(path)


def download_release(
    dest: Path,
    base_url: str | None = None,
    *,
    ref: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> DownloadResult:
    """Fetch every release file not already present and verified into `dest`; write `dest/manifest.json`.

    `ref` None: the pinned commit, every file checked against its shipped sha256. Another `ref`: that commit, its
    hashes recorded but not checked (the package ships none for it). `base_url`: a mirror of the data folder."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    pinned = pinned_release()
    commit = ref or pinned.commit
    expected = pinned.sha256 if commit == pinned.commit else None
    previous = read_manifest(dest)
    manifest = previous if manifest_commit(dest) in (commit, None) else {}
    result = DownloadResult(dest=dest, manifest=dest / MANIFEST, commit=commit, checked=expected is not None)
    files = release_files()
    todo = [rel for rel in files if force or not is_current(dest, rel, manifest, expected)]
    result.skipped = [rel for rel in files if rel not in todo]
    if todo:
        source = Source(commit, base_url, expected)
        with _progress(progress) as bars:
            asyncio.run(_fetch_all(source, dest, todo, result, bars))
    _write_manifest(dest, base_url, commit, result.checked, files)
    return result


@dataclass(frozen=True)
class Source:
    """Where the files come from and what their sha256 must be (None: not checked)."""

    ref: str
    base_url: str | None
    expected: dict[str, str] | None


async def _fetch_all(source: Source, dest: Path, todo: list[str], result: DownloadResult, bars: Progress) -> None:
    """One aiohttp session (the toolkit's one HTTP stack) for the whole download, one file at a time."""
    async with new_session() as http:
        bar = bars.add_task("", total=None)
        for i, rel in enumerate(todo, start=1):
            bars.reset(bar, total=None, description=f"[{i}/{len(todo)}] {rel}")
            await _fetch_one(http, source, dest, rel, (bars, bar))
            result.fetched.append(rel)


async def _fetch_one(http: aiohttp.ClientSession, source: Source, dest: Path, rel: str,
                     bar: tuple[Progress, TaskID]) -> None:
    """Stream one file to a temporary sibling, verify it (content and pinned sha256), then rename it into place."""
    url = file_url(rel, ref=source.ref, base_url=source.base_url)
    target = dest / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            await _stream(http, url, out, bar)
        problem = verify_file(tmp, rel) or sha256_problem(tmp, rel, source.expected)
        if problem is not None:
            raise DataError(f"downloaded {redact_url(url)} but it does not verify: {problem} (release commit "
                            f"{source.ref[:12]}; --ref COMMIT takes another commit on purpose)")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


async def _stream(http: aiohttp.ClientSession, url: str, out: BinaryIO, bar: tuple[Progress, TaskID]) -> None:
    bars, task = bar
    try:
        async with http.get(url, timeout=_TIMEOUT, proxy=proxy_for(url)) as resp:
            if resp.status != 200:
                raise DataError(
                    f"cannot download {redact_url(url)}: HTTP {resp.status} {resp.reason} (check --ref or --base-url)"
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


def _write_manifest(dest: Path, base_url: str | None, commit: str, checked: bool, files: list[str]) -> None:
    """Record the commit, size and sha256 of every present file, atomically, after the downloads."""
    digests = {rel: file_digest(dest / rel) for rel in files if (dest / rel).is_file()}
    body = {"base_url": redact_url(base_url or f"{RAW_ROOT}/{commit}"), "repository": REPOSITORY, "commit": commit,
            "sha256_checked": checked, "files": digests}
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
