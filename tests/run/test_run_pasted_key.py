"""Issue 23, defect 2: an API key pasted where the name of its variable belongs is refused without being echoed,
and a run that stops before its preflight passes writes no file (config.yaml used to hold the key)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeServer

PASTED = "sk-proj-PASTEDkey1234567890abcdef"


def _run(server: FakeServer, bench_root: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "howtobench", "run", "--run-dir", str(tmp_path / "run"),
               "--workspace", str(tmp_path / "ws"), "--data", str(bench_root),
               "--base-url", server.base_url, "--model", "fake-writer",
               "--judge-base-url", server.base_url, "--judge-model", "fake-judge",
               "--limit", "1", "--models", "deepseek-r1", "--bootstrap", "50", *flags]
    env = {k: v for k, v in os.environ.items() if k != "HTB_UNSET_KEY"}
    return subprocess.run(command, env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=300)


def _files_holding(tmp_path: Path, text: str) -> list[Path]:
    return [p for p in tmp_path.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--judge-api-key-env", PASTED, "error: --judge-api-key-env looks like an API key itself, not the name of the "
                                    "environment variable that holds it (the value is not shown)"),
    ("--api-key-env", "my key=abc", "error: --api-key-env is not the name of an environment variable (letters, "
                                    "digits and _, e.g. OPENAI_API_KEY; the value is not shown, in case it is a key)"),
])
def test_a_pasted_key_is_refused_unechoed_and_in_no_file(flag: str, value: str, said: str, fake_server: FakeServer,
                                                         bench_root: Path, tmp_path: Path) -> None:
    done = _run(fake_server, bench_root, tmp_path, flag, value)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert value not in done.stdout + done.stderr
    assert _files_holding(tmp_path, value) == [] and not (tmp_path / "run" / "config.yaml").exists()
    assert fake_server.log == []  # refused before any request


def test_a_stop_before_the_preflight_leaves_the_run_files_as_they_were(fake_server: FakeServer, bench_root: Path,
                                                                       tmp_path: Path) -> None:
    config = tmp_path / "run" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("method: tow\njudge: {model: fake-judge}\n# as the last run left it\n", encoding="utf-8")
    done = _run(fake_server, bench_root, tmp_path, "--judge-api-key-env", "HTB_UNSET_KEY")
    assert done.returncode == 2
    assert "environment variable HTB_UNSET_KEY (API key for fake-judge) is not set" in done.stderr
    assert config.read_text(encoding="utf-8").endswith("# as the last run left it\n")
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.yaml"]
