"""The embedded llama.cpp server with the Gemma-3-270M GGUF, for real: it answers, and it loads its weights
without llama.cpp's extra buffer types (CPU_REPACK, AMX) — the fix for the AMX crash, observable on any CPU."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest, SamplingParams

pytestmark = pytest.mark.local_model

SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}
EXTRA_BUFFER = re.compile(r"\b(CPU_REPACK|AMX)\s+model buffer size")


def cpu_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text(encoding="utf-8") if Path("/proc/cpuinfo").exists() else ""
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":")[1].split()}


async def test_local_model_answers_text_and_schema_on_plain_cpu_buffers(tmp_path: Path) -> None:
    from howtobench.llm.local import LOCAL_MODEL, local_endpoint_config, local_server

    async with local_server(quiet=True) as server:
        endpoint = local_endpoint_config(server)
        async with open_client(endpoint, workspace=tmp_path) as client:
            text = await client.chat(ChatRequest(
                messages=({"role": "user", "content": "用一句话介绍杭州。"},),
                sampling=SamplingParams(max_tokens=24), purpose="smoke"))
            scored = await client.chat(ChatRequest(
                messages=({"role": "user", "content": "Rate this sentence from 1 to 3: 'The cat sat.'"},),
                sampling=SamplingParams(max_tokens=16), response_schema=SCHEMA, purpose="smoke"))
        log = server.log.read_text(errors="replace")
    assert endpoint.model == LOCAL_MODEL
    assert text.ok and text.text is not None and text.text.strip() and text.usage.completion_tokens > 0
    assert text.endpoint == server.base_url
    assert scored.ok and scored.data is not None and scored.data["score"] in (1, 2, 3)
    # llama.cpp's load log: the weights sit in the plain CPU buffer, no tensor was repacked, no AMX buffer —
    # although this build can repack (its system info says REPACK = 1)
    assert "CPU_Mapped model buffer size" in log and "REPACK = 1" in log
    assert not EXTRA_BUFFER.search(log) and "repack tensor" not in log
    assert server.dead  # stopped on exit


@pytest.mark.skipif("avx2" not in cpu_flags() or any(f.startswith("amx") for f in cpu_flags()),
                    reason="shows repacking on an AVX2 CPU; never start llama.cpp with its AMX buffers")
async def test_without_our_setting_this_cpu_would_repack(tmp_path: Path) -> None:
    """The control: llama.cpp's default on this AVX2 CPU does use the CPU_REPACK buffer, so the absence above is
    our setting at work (and the same setting keeps the AMX buffer off on AMX machines)."""
    from howtobench.llm.local import local_server

    async with local_server(quiet=True, extra_buffers=True) as server:
        log = server.log.read_text(errors="replace")
    assert EXTRA_BUFFER.search(log) and "repack tensor" in log


def _server_child(pid: int) -> int | None:
    """The pid of the local model server started by process `pid` (Linux /proc), if it runs yet."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else []:
        with contextlib.suppress(OSError):
            if b"howtobench.llm.local_server" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
    return None


@pytest.mark.timeout(900)
def test_killing_the_real_server_mid_run_stops_generate_at_once_and_a_rerun_completes(
        tmp_path: Path, bench_root: Path) -> None:
    out = tmp_path / "w.jsonl"
    command = [sys.executable, "-m", "howtobench", "generate", "--data", str(bench_root), "--task", "open",
               "--limit", "4", "--max-tokens", "24", "-o", str(out), "--workspace", str(tmp_path / "ws"),
               "--no-progress"]
    env = {**os.environ, "HOWTOBENCH_DATA": str(bench_root)}
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as proc:
        while not (out.exists() and out.read_text(encoding="utf-8").strip()):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        server = _server_child(proc.pid)
        assert server is not None
        os.kill(server, signal.SIGKILL)
        killed = time.monotonic()
        status = proc.wait(timeout=60)
        took = time.monotonic() - killed
        err = proc.stderr.read() if proc.stderr else ""
    assert status == 2 and took < 10, (status, took, err)
    line = next(x for x in err.splitlines() if x.startswith("error:"))
    assert re.match(r"error: http://127\.0\.0\.1:\d+/v1: the local model server was killed by signal SIGKILL "
                    r"\(killed: out of memory, or by hand\) during the run; the last lines of its log", line), err
    assert len(err.split(line, 1)[1].strip().splitlines()) >= 3  # the log tail follows
    written = len(out.read_text(encoding="utf-8").splitlines())
    assert 1 <= written < 4 and not (tmp_path / "w.failed.jsonl").exists()  # nothing recorded as failed
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and all(r["output"].strip() for r in rows)
