"""The pinned HoWToBench release: its files, the commit they are taken from, and the sha256 of each (shipped).

Kept apart from the download (no HTTP here), so `data stats` can check a benchmark folder against the pinned
release without importing the network stack.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

REPOSITORY = "ZhuoerFeng/ACL2026-Tree-of-Writing"
RAW_ROOT = f"https://raw.githubusercontent.com/{REPOSITORY}"
MANIFEST = "manifest.json"
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


@dataclass(frozen=True)
class PinnedRelease:
    """The commit the release is pinned to and the sha256 of each of its files (shipped in `release.json`)."""

    commit: str
    sha256: dict[str, str]


@functools.cache
def pinned_release() -> PinnedRelease:
    raw = json.loads(resources.files("howtobench.data").joinpath("release.json").read_text(encoding="utf-8"))
    return PinnedRelease(commit=raw["commit"], sha256=dict(raw["files"]))


RELEASE_COMMIT = pinned_release().commit


def release_files() -> list[str]:
    """Relative paths of every file of the release, in download order."""
    files = []
    for task in EXPECTED_ROWS:
        files.append(f"{task}/aligned.jsonl")
        files.extend(f"{task}/inferences/{model}.jsonl" for model in RELEASE_MODELS)
    files.append("LICENSE")
    return files


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


def manifest_commit(dest: Path) -> str | None:
    """The commit an existing manifest records (None: no manifest, or one written before commits were pinned)."""
    try:
        loaded = json.loads((dest / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    commit = loaded.get("commit") if isinstance(loaded, dict) else None
    return commit if isinstance(commit, str) else None


class ReleaseCheck(BaseModel):
    """The benchmark folder's files against the pinned release: what `data stats` prints."""

    repository: str
    commit: str  # the manifest's commit when there is one, else the pinned commit the files were checked against
    pinned: bool  # the folder claims the pinned commit (or has no manifest) and its files were checked against it
    sha256: dict[str, str]  # every release file present, with its sha256
    mismatched: list[str]  # files whose sha256 differs from the pinned release's
    missing: list[str]


def check_release(root: Path) -> ReleaseCheck:
    """Hash every release file under `root` and compare with the pinned sha256 (for `data stats`)."""
    pinned = pinned_release()
    commit = manifest_commit(root) or pinned.commit
    present = [rel for rel in release_files() if (root / rel).is_file()]
    sha = {rel: file_digest(root / rel)["sha256"] for rel in present}
    checked = commit == pinned.commit
    return ReleaseCheck(repository=REPOSITORY, commit=commit, pinned=checked, sha256=sha,
                        mismatched=[rel for rel in present if checked and sha[rel] != pinned.sha256[rel]],
                        missing=[rel for rel in release_files() if rel not in sha])


