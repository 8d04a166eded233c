"""One `serve` per workspace (issue 34, item 10): a second server on a workspace that one is serving refuses at
once with one line naming the first (two servers fed the same samples paid twice for the calls in flight); a
server killed with -9 leaves no stuck lock (tests/serve/test_serve_cli.py restarts on the same workspace)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fake_server import FakeServer
from judge_replies import server_handler
from reward_serving import ServeProcess, serve_args


def test_a_second_server_on_one_workspace_is_refused_naming_the_first(fake_server: FakeServer,
                                                                      tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    args = serve_args(fake_server.base_url, tmp_path / "ws")
    with ServeProcess(args) as first:
        assert first.proc is not None
        second = subprocess.run([sys.executable, "-m", "howtobench", "serve", "--port", "0", *args],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        said = [line for line in second.stderr.splitlines() if line.strip()]
        assert len(said) == 1 and "Traceback" not in second.stderr
        assert said[0].startswith(f"error: workspace {tmp_path / 'ws'} is served by another howtobench serve "
                                  f"(pid {first.proc.pid} on ")
        assert "pay twice" in said[0]
        assert second.stdout == ""  # no URL announced: it never listened
        assert first.proc.poll() is None  # the first one goes on
