"""The embedded server's lifecycle without llama.cpp: readiness is a real completion, and a server that dies —
at start, on its first completion (the AMX crash), or mid-run — stops the run at once with `ServerDied`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_server import FakeServer, Reply, script
from howtobench.data.models import Item
from howtobench.errors import LLMError, ServerDied, is_run_level
from howtobench.generate import failures_path, generate_writings
from howtobench.llm import local
from howtobench.llm.client import open_client
from howtobench.llm.server_process import ServerProcess, stop_when_it_dies

FAKE_SERVER = str(Path(__file__).parents[1] / "fake_server.py")

# An HTTP server whose /models answers but whose first completion kills it with SIGSEGV: what llama.cpp's AMX
# buffers did on Sapphire Rapids machines (the readiness check used to ask /models only).
CRASH_ON_COMPLETION = """
import os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
    def do_POST(self):
        print("llama_model_load: AMX model buffer size = 120 MiB", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
print("listening", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def use_fake_model_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str] | None = None) -> None:
    """`local.local_endpoint` starts `command` (default: tests/fake_server.py, 0.2 s per reply) instead of llama.cpp."""
    monkeypatch.setattr(local, "model_file", lambda: tmp_path / "model.gguf")
    monkeypatch.setattr(local, "user_cache_dir", lambda: tmp_path / "cache")

    def command_for(_model: Path, port: int, **_kw: object) -> list[str]:
        if command is not None:
            return [*command, str(port)]
        return [sys.executable, FAKE_SERVER, "--port", str(port), "--latency", "0.2"]

    monkeypatch.setattr(local, "server_command", command_for)


async def test_ready_means_a_completion_succeeded(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = script(Reply.server_error(), Reply.server_error(), Reply.text("H"))
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as proc:
        server = ServerProcess(proc, fake_server.base_url, tmp_path / "log")
        await server.wait_until_ready("m", timeout_s=30)
        proc.kill()
    chats = [r for r in fake_server.log if r.path.endswith("/chat/completions")]
    assert len(chats) == 3 and not any(r.path.endswith("/models") for r in fake_server.log)
    assert chats[-1].body["max_tokens"] == 1


async def test_server_that_dies_at_start_is_reported_with_its_log(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_model_server(monkeypatch, tmp_path, [sys.executable, "-c", "print('boom'); raise SystemExit(3)"])
    with pytest.raises(ServerDied, match=r"^http://127\.0\.0\.1:\d+/v1: the local model server exited with code 3 "
                                         r"while starting") as info:
        async with local.local_endpoint(quiet=True):
            pass
    assert str(info.value).rstrip().endswith("boom")  # the log tail


async def test_a_crash_on_the_first_completion_is_caught_before_the_run(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_model_server(monkeypatch, tmp_path, [sys.executable, "-c", CRASH_ON_COMPLETION])
    with pytest.raises(ServerDied) as info:
        async with local.local_endpoint(quiet=True):
            raise AssertionError("a server that crashes on its first completion is not ready")
    message = str(info.value)
    assert "was killed by signal SIGSEGV (a crash inside llama.cpp) while starting" in message.splitlines()[0]
    assert message.splitlines()[-1] == "llama_model_load: AMX model buffer size = 120 MiB"
    kept = list((tmp_path / "cache" / "logs").glob("local-model-*.log"))
    assert len(kept) == 1 and str(kept[0]) in message  # the log of a failed server is kept and named


ITEMS = [Item(infer_id=f"o{k}", task_type="open", basic_instruction=f"请写第{k}篇短文。", genre="essay")
         for k in range(12)]


async def test_killing_the_server_mid_run_stops_it_at_once_and_a_rerun_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_model_server(monkeypatch, tmp_path)
    out = tmp_path / "w.jsonl"

    async def kill_after_first_writing(server: ServerProcess) -> float:
        while not out.exists() or not out.read_text(encoding="utf-8").strip():
            await asyncio.sleep(0.02)
        os.kill(server.proc.pid, signal.SIGKILL)
        return time.monotonic()

    with pytest.raises(ServerDied) as info:
        async with local.local_server(quiet=True) as server:
            endpoint = local.local_endpoint_config(server)
            killer = asyncio.ensure_future(kill_after_first_writing(server))
            async with open_client(endpoint, workspace=tmp_path / "ws") as client:
                await generate_writings(client, ITEMS, out, concurrency=2, progress=False)
    stopped = time.monotonic()
    assert stopped - killer.result() < 2  # at once: no retries against a dead server
    first, *tail = str(info.value).splitlines()
    assert first.startswith(f"{server.base_url}: the local model server was killed by signal SIGKILL")
    assert "during the run" in first and tail and tail[0].startswith("PORT ")  # the log's last lines
    assert is_run_level(info.value)
    written = out.read_text(encoding="utf-8").splitlines()
    assert 1 <= len(written) < len(ITEMS) and not failures_path(out).exists()  # nothing recorded as failed
    async with local.local_endpoint(quiet=True) as endpoint, open_client(endpoint, workspace=tmp_path / "ws") as c:
        summary = await generate_writings(c, ITEMS, out, concurrency=2, progress=False)
    assert (summary.skipped, summary.written, summary.failed) == (len(written), len(ITEMS) - len(written), 0)


async def test_a_block_that_swallows_the_cancellation_still_gets_server_died(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"]) as proc:
        server = ServerProcess(proc, "http://127.0.0.1:9/v1", tmp_path / "log")
        with pytest.raises(ServerDied, match="exited with code 0 during the run"):
            async with stop_when_it_dies(server):
                with contextlib.suppress(asyncio.CancelledError):  # e.g. serve-local waiting for Ctrl-C
                    await asyncio.sleep(30)
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0  # the watcher's cancellation was taken back
        await asyncio.sleep(0)  # and nothing is pending


async def test_an_error_unrelated_to_a_living_server_passes_through(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as proc:
        server = ServerProcess(proc, "http://127.0.0.1:9/v1", tmp_path / "log")
        with pytest.raises(LLMError, match="not about the server"):
            async with stop_when_it_dies(server):
                raise LLMError("not about the server")
        proc.kill()


def test_imports_where_the_signal_module_has_no_sigkill() -> None:
    """Windows' signal module has no SIGKILL: importing the launcher there must not fail (it is imported by every
    command that may use the local model)."""
    code = ("import signal\ndel signal.SIGKILL\nimport howtobench.llm.server_process as sp\n"
            "print(sorted(sp._SIGNAL_HINTS))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['SIGABRT', 'SIGKILL', 'SIGSEGV']"
