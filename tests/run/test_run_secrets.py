"""Issue 13, point 8: credentials in base URLs (userinfo, key-like query parameters) and API keys never reach
a file, a log, the cache, the report or the terminal — checked by grepping everything a run writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fake_server import FakeServer, Reply, default_handler

SECRETS = ("userinfo-S3CRET", "query-S3CRET", "sig-S3CRET", "envkey-S3CRET")


def _run(server: FakeServer, bench_root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    host = server.base_url.removeprefix("http://")
    writer = f"http://alice:userinfo-S3CRET@{host}"
    judge = f"{server.base_url}?api-version=2024-06-01&api-key=query-S3CRET&sig=sig-S3CRET"
    command = [sys.executable, "-m", "howtobench", "run", "--run-dir", str(tmp_path / "run"),
               "--workspace", str(tmp_path / "ws"), "--data", str(bench_root),
               "--base-url", writer, "--model", "fake-writer",
               "--judge-base-url", judge, "--judge-model", "fake-judge", "--judge-api-key-env", "HTB_JUDGE_KEY",
               "--limit", "1", "--models", "deepseek-r1", "--parallel", "1", "--bootstrap", "50",
               "--max-tokens", "64"]
    env = {**os.environ, "HTB_JUDGE_KEY": "envkey-S3CRET", "COLUMNS": "200"}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _leaks(tmp_path: Path, *texts: str) -> list[str]:
    found = [f"output: {s}" for s in SECRETS for t in texts if s in t]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.relative_to(tmp_path)}: {s}" for s in SECRETS if s.encode() in data]
    return found


def test_a_run_with_credentials_in_its_urls_stores_and_prints_none(fake_server: FakeServer, bench_root: Path,
                                                                   tmp_path: Path) -> None:
    done = _run(fake_server, bench_root, tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert {"manifest.json", "config.yaml", "report.html", "leaderboard.json"} <= set(written)
    assert {"calls.sqlite"} <= {p.name for p in (tmp_path / "ws").iterdir()}
    assert _leaks(tmp_path, done.stdout, done.stderr) == []
    manifest = (tmp_path / "run" / "manifest.json").read_text(encoding="utf-8")
    assert "http://***@127.0.0.1" in manifest and "api-version=2024-06-01&api-key=***&sig=***" in manifest
    # the credentials were really used
    sent = [r for r in fake_server.log if r.method == "POST"]
    assert any(r.headers.get("authorization", "").startswith("Basic ") for r in sent)
    assert any(r.headers.get("authorization") == "Bearer envkey-S3CRET" for r in sent)


def test_a_refused_call_names_the_url_without_its_credentials(fake_server: FakeServer, bench_root: Path,
                                                              tmp_path: Path) -> None:
    fake_server.handler = lambda body: (Reply.error(401, "bad key envkey-S3CRET") if body.get("model") == "fake-judge"
                                        else default_handler(body))
    done = _run(fake_server, bench_root, tmp_path)
    # the message reaches the terminal (a run-level stop) or a judgment row, with the URL and without secrets
    judgments = tmp_path / "run" / "judgments" / "tow.jsonl"
    shown = done.stderr + (judgments.read_text(encoding="utf-8") if judgments.exists() else "")
    assert "chat/completions?api-version=2024-06-01&api-key=***&sig=*** answered HTTP 401 for model fake-judge" in shown
    assert _leaks(tmp_path, done.stdout, done.stderr) == []
