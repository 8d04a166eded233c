"""`howtobench data download` against a loopback HTTP server serving the shared benchmark copy."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from howtobench.cli import data as data_cli
from howtobench.data.download import download_release, file_url, verify_file
from howtobench.data.loader import LoadReport, load_items, load_release_writings
from howtobench.data.release import MANIFEST, RELEASE_COMMIT, pinned_release, read_manifest, release_files
from howtobench.errors import DataError


@contextmanager
def serve(directory: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve `directory` over HTTP on loopback; yield the base URL and the list of requested paths."""
    requested: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            requested.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requested
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def release_server(bench_root: Path) -> Iterator[tuple[str, list[str]]]:
    with serve(bench_root) as served:
        yield served


def test_file_list_is_the_release() -> None:
    files = release_files()
    assert len(files) == 3 * 11 + 1
    assert files[0] == "completion/aligned.jsonl" and files[-1] == "LICENSE"
    assert "open/inferences/deepseek-r1.jsonl" in files


def test_download_verify_skip_and_refetch(release_server: tuple[str, list[str]], tmp_path: Path) -> None:
    base_url, requested = release_server
    dest = tmp_path / "data"

    first = download_release(dest, base_url, progress=False)
    assert len(first.fetched) == 34 and first.skipped == []
    assert all(verify_file(dest / rel, rel) is None for rel in release_files())
    manifest = read_manifest(dest)
    assert set(manifest) == set(release_files())
    assert manifest["LICENSE"]["size"] == (dest / "LICENSE").stat().st_size
    assert not list(dest.rglob("*.part"))
    report = LoadReport()
    items = load_items(dest, report=report)
    assert len(items) == 1302 and len(load_release_writings(dest, items=items, report=report)) == 13_020

    requested.clear()
    second = download_release(dest, base_url, progress=False)
    assert second.fetched == [] and len(second.skipped) == 34
    assert requested == []

    # Same row count, valid JSON, different bytes: only the manifest's sha256 can tell.
    target = dest / "guide" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    target.write_bytes(target.read_bytes().replace("的".encode(), "地".encode(), 1))
    (dest / "open" / "aligned.jsonl").write_text('{"truncated": ', encoding="utf-8")
    third = download_release(dest, base_url, progress=False)
    assert sorted(third.fetched) == ["guide/inferences/gpt-4o-2024-11-20.jsonl", "open/aligned.jsonl"]
    assert sorted(requested) == ["/guide/inferences/gpt-4o-2024-11-20.jsonl", "/open/aligned.jsonl"]
    assert read_manifest(dest) == manifest

    requested.clear()
    forced = download_release(dest, base_url, force=True, progress=False)
    assert len(forced.fetched) == 34 and len(requested) == 34


def test_server_404_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "served"
    empty.mkdir()
    with serve(empty) as (base_url, _), pytest.raises(DataError) as info:
        download_release(tmp_path / "data", base_url, progress=False)
    assert str(info.value) == (
        f"cannot download {base_url}/completion/aligned.jsonl: HTTP 404 File not found (check --ref or --base-url)"
    )
    assert not (tmp_path / "data" / "completion" / "aligned.jsonl").exists()
    assert not list((tmp_path / "data").rglob("*.part"))


def test_a_served_file_that_does_not_verify_is_not_installed(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "completion").mkdir(parents=True)
    (served / "completion" / "aligned.jsonl").write_text('{"infer_id": "x"}\n', encoding="utf-8")
    with serve(served) as (base_url, _), pytest.raises(DataError, match="does not verify: 1 rows, expected 379"):
        download_release(tmp_path / "data", base_url, progress=False)
    assert not (tmp_path / "data" / "completion" / "aligned.jsonl").exists()


def test_connection_refused_is_a_data_error(tmp_path: Path) -> None:
    with serve(tmp_path) as (base_url, _):
        pass  # server is now closed: its port refuses connections
    with pytest.raises(DataError) as info:
        download_release(tmp_path / "data", base_url, progress=False)
    said = str(info.value)  # one mention of the URL (it was named twice), and the offline way out
    assert said.startswith("cannot download the release: cannot connect to ") and said.count(base_url) == 1
    assert "point --data or HOWTOBENCH_DATA at it" in said


def test_cli_download(release_server: tuple[str, list[str]], tmp_path: Path) -> None:
    base_url, _ = release_server
    dest = tmp_path / "cache"
    args = ["data", "download", "--dest", str(dest), "--base-url", base_url]
    app = typer.Typer()
    data_cli.register(app)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"34 files fetched, 0 already verified; benchmark ready in {dest}" in result.output
    again = CliRunner().invoke(app, args)
    assert "0 files fetched, 34 already verified" in again.output
    assert (dest / MANIFEST).is_file()


def test_redirected_download_with_credentials_in_the_url_never_stores_them(bench_root: Path, tmp_path: Path) -> None:
    """GitHub-style redirects are followed; userinfo in --base-url is used but the manifest keeps it redacted."""
    seen: list[tuple[str, str | None]] = []

    class Moved(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            seen.append((self.path, self.headers.get("Authorization")))
            if self.path.startswith("/moved/"):
                self.send_response(301)
                self.send_header("Location", self.path.removeprefix("/moved"))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Moved, directory=str(bench_root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://reader:S3CRET-pw@127.0.0.1:{server.server_address[1]}/moved"
        result = download_release(tmp_path / "data", base, progress=False)
    finally:
        server.shutdown()
        server.server_close()
    assert len(result.fetched) == 34 and len(seen) == 68
    assert seen[0] == ("/moved/completion/aligned.jsonl", "Basic cmVhZGVyOlMzQ1JFVC1wdw==")
    manifest = json.loads((tmp_path / "data" / MANIFEST).read_text())
    assert manifest["base_url"] == f"http://***@127.0.0.1:{server.server_address[1]}/moved"
    assert b"S3CRET" not in (tmp_path / "data" / MANIFEST).read_bytes()


def test_the_release_is_pinned_to_a_commit_with_shipped_hashes(bench_root: Path) -> None:
    """The release URL names a commit, never a branch, and the shipped sha256 are those of the shared copy."""
    pinned = pinned_release()
    assert pinned.commit == RELEASE_COMMIT == "efe51d98747f364bab672a2d57393ba01e70f0d8"
    assert file_url("guide/aligned.jsonl", ref=pinned.commit, base_url=None) == (
        "https://raw.githubusercontent.com/ZhuoerFeng/ACL2026-Tree-of-Writing/"
        "efe51d98747f364bab672a2d57393ba01e70f0d8/data/guide/aligned.jsonl")
    license_url = file_url("LICENSE", ref=pinned.commit, base_url=None)  # at the repository's root, not in data/
    assert license_url.endswith("/efe51d98747f364bab672a2d57393ba01e70f0d8/LICENSE")
    assert set(pinned.sha256) == set(release_files())
    assert all(hashlib.sha256((bench_root / rel).read_bytes()).hexdigest() == digest
               for rel, digest in pinned.sha256.items())


def test_a_file_that_is_not_the_pinned_release_is_refused(bench_root: Path, tmp_path: Path) -> None:
    """Same rows, valid JSON, one character changed upstream: the sha256 refuses it, unless --ref asks for it."""
    served = tmp_path / "served"
    shutil.copytree(bench_root, served)
    target = served / "guide" / "inferences" / "gpt-4o-2024-11-20.jsonl"
    target.write_bytes(target.read_bytes().replace("的".encode(), "地".encode(), 1))
    with serve(served) as (base_url, _):
        with pytest.raises(DataError, match="guide/inferences/gpt-4o-2024-11-20.jsonl but it does not verify: "
                                            "sha256 .* is not the release's"):
            download_release(tmp_path / "data", base_url, progress=False)
        assert not (tmp_path / "data" / "guide" / "inferences" / "gpt-4o-2024-11-20.jsonl").exists()
        other = download_release(tmp_path / "other", base_url, ref="main", progress=False)
    assert other.commit == "main" and other.checked is False and len(other.fetched) == 34
    manifest = json.loads((tmp_path / "other" / MANIFEST).read_text(encoding="utf-8"))
    assert (manifest["commit"], manifest["sha256_checked"]) == ("main", False)


def test_data_stats_prints_the_commit_and_the_hashes_it_verified(bench_root: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    data_cli.register(app)
    result = CliRunner().invoke(app, ["data", "stats", "--data", str(bench_root), "--format", "json"])
    assert result.exit_code == 0, result.output
    release = json.loads(result.stdout)["release"]
    assert release["commit"] == RELEASE_COMMIT and release["pinned"] is True
    assert release["sha256"] == pinned_release().sha256 and release["mismatched"] == release["missing"] == []
    shown = CliRunner().invoke(app, ["data", "stats", "--data", str(bench_root)], env={"COLUMNS": "200"})
    assert f"release ZhuoerFeng/ACL2026-Tree-of-Writing@{RELEASE_COMMIT}: 34 files hashed, 0 differ" in shown.output
    assert pinned_release().sha256["open/aligned.jsonl"] in shown.output
