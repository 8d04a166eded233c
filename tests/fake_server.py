"""A fake OpenAI-compatible server on loopback, for tests and benchmarks.

Real HTTP/1.1 (keep-alive, Content-Length or chunked request bodies) on 127.0.0.1 and a random free
port, written on raw asyncio streams so it costs ~0.1 ms of CPU per request and sustains well over
640 calls/s (64 slots x 100 ms latency). It runs its own event loop in a background thread
(`FakeServer`) or in a separate process (`FakeServerProcess`, for throughput benchmarks where the
client must not share the GIL with the server).

Routes
    POST /v1/chat/completions   -> the scripted reply (see below)
    GET  /v1/models             -> {"object": "list", "data": [{"id": <model>, ...}]}
    GET  /health                -> {"status": "ok"}

Scripting replies
    A handler is a callable ``(request_json: dict) -> Reply | str | dict`` called in the server's
    loop for every chat request; a ``str`` is text content, a ``dict`` is a JSON object serialised
    as the message content. Build replies with the constructors of `Reply`:

        Reply.text("hello")                    200, content "hello"
        Reply.json({"score": 7})               200, content '{"score": 7}'  (out-of-range values
                                               are just content: Reply.json({"score": 42}))
        Reply.truncated_json({"score": 7})     200, content is the JSON cut in half
        Reply.rate_limited(retry_after=0.05)   429 with a Retry-After header (seconds)
        Reply.server_error()                   500 with an OpenAI-style error body
        Reply.error(401, "bad key")            any status with an error body
        Reply.timeout(seconds=3600)            sleeps (longer than the client's timeout), then closes
        Reply.drop()                           aborts the connection without a response (reset)
        Reply.truncated_body()                 200 whose HTTP body stops half-way (connection closed)

    Every Reply may carry ``delay`` (extra seconds), ``cached_tokens`` (reported in
    ``usage.prompt_tokens_details.cached_tokens``), ``usage`` (a full override) and
    ``finish_reason`` (default "stop"; e.g. Reply.text("cut", finish_reason="length")).
    `script(*replies, then=default_handler)` makes a handler that plays replies in order.
    `default_handler` echoes the last user message, or, when the request carries
    ``response_format`` with a ``json_schema``, returns a schema-shaped object (enum values chosen
    deterministically from the request), so judge tests get valid JSON without scripting.
    `fault_handler(rate, seed)` injects every kind of fault at the given rate (used by the
    subprocess mode and the fault tests).

Server settings
    ``latency``  seconds every chat request takes (while holding a slot)
    ``capacity`` max concurrent chat requests being served; excess requests wait for a slot
    ``model``    the model id reported by /v1/models
    ``port``, ``reuse_port``  listen on a given port, shared (SO_REUSEPORT) with a socket the test holds, so
                 the port stays taken after `stop()`: a "dead" server's port then refuses connections
                 instead of being reused by another process's server (`hold_port()`)

Records
    ``server.requests``  list of JSON bodies of every chat request received (appended on arrival,
                         before the reply, so faulted attempts are counted too)
    ``server.log``       list of `Recorded(method, path, headers, body)` for every request
    ``server.answered``  digests (sha256 of the canonical JSON body) of every chat request answered 200: what a
                         provider bills, whether or not the client was still there to read it
    ``server.repeated``  chat requests that arrived after a request with the same digest was answered: paid twice
    ``server.reset()``   clears them all

Usage (pytest fixture ``fake_server`` in tests/conftest.py yields a started `FakeServer`)::

    def test_x(fake_server):
        fake_server.handler = script(Reply.rate_limited(0.01), Reply.json({"score": 7}))
        endpoint = EndpointConfig(model="fake", base_urls=(fake_server.base_url,))
        ...
        assert len(fake_server.requests) == 2

Subprocess mode::

    with FakeServerProcess(latency=0.1, capacity=64) as srv:   # srv.base_url
        ...
    # or: python tests/fake_server.py --latency 0.1 --capacity 64 [--fault-rate 0.2]  (prints "PORT <n>")
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Fault = Literal["timeout", "drop", "truncate_body"]
Handler = Callable[[dict[str, Any]], "Reply | str | dict[str, Any]"]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass
class Reply:
    """One scripted response to a chat request."""

    content: str = ""
    status: int = 200
    retry_after: float | None = None
    fault: Fault | None = None
    delay: float = 0.0
    timeout_s: float = 3600.0
    cached_tokens: int | None = None
    usage: dict[str, Any] | None = None
    error_message: str = ""
    finish_reason: str | None = "stop"  # None: the choice carries no finish_reason

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        return cls(content=json.dumps(obj, ensure_ascii=False), **kw)

    @classmethod
    def truncated_json(cls, obj: Any, **kw: Any) -> Reply:
        full = json.dumps(obj, ensure_ascii=False)
        return cls(content=full[: max(1, len(full) // 2)], **kw)

    @classmethod
    def rate_limited(cls, retry_after: float = 0.05) -> Reply:
        return cls(status=429, retry_after=retry_after, error_message="rate limit exceeded")

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, error_message="internal server error")

    @classmethod
    def error(cls, status: int, message: str = "request refused") -> Reply:
        return cls(status=status, error_message=message)

    @classmethod
    def timeout(cls, seconds: float = 3600.0) -> Reply:
        return cls(fault="timeout", timeout_s=seconds)

    @classmethod
    def drop(cls) -> Reply:
        return cls(fault="drop")

    @classmethod
    def truncated_body(cls) -> Reply:
        return cls(content="this body is cut", fault="truncate_body")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


# --------------------------------------------------------------------------- handlers


def _request_seed(req: dict[str, Any]) -> int:
    blob = json.dumps(req.get("messages", []), sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")


def schema_instance(schema: dict[str, Any], seed: int = 0) -> Any:
    """A value satisfying a simple JSON schema (objects, enums, scalars, arrays); enums pick by seed."""
    if "enum" in schema:
        values = schema["enum"]
        return values[seed % len(values)]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: schema_instance(sub, seed // (i + 2) + i) for i, (name, sub) in enumerate(props.items())}
    if kind == "array":
        n = max(1, schema.get("minItems", 1))
        return [schema_instance(schema.get("items", {}), seed + i) for i in range(n)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0.5))
    if kind == "boolean":
        return bool(seed % 2)
    if kind == "null":
        return None
    return "ok"


def default_handler(req: dict[str, Any]) -> Reply:
    """Echo the last user message, or a schema-shaped object when a json_schema response_format is sent."""
    fmt = req.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        return Reply.json(schema_instance(schema, _request_seed(req)))
    if fmt.get("type") == "json_object":
        return Reply.json({"ok": True})
    users = [m.get("content", "") for m in req.get("messages", []) if m.get("role") == "user"]
    return Reply.text(f"echo: {users[-1] if users else ''}")


def script(*replies: Reply | str | dict[str, Any], then: Handler = default_handler) -> Handler:
    """A handler that plays `replies` in order (one per request), then falls back to `then`."""
    queue = list(replies)
    lock = threading.Lock()

    def handler(req: dict[str, Any]) -> Reply | str | dict[str, Any]:
        with lock:
            if queue:
                return queue.pop(0)
        return then(req)

    return handler


def fault_handler(rate: float, seed: int = 0, *, timeout_s: float = 3600.0,
                  base: Handler = default_handler) -> Handler:
    """Inject a fault of every kind (429, 500, timeout, drop, truncated body/JSON, out-of-range) at `rate`."""
    rng = random.Random(seed)
    lock = threading.Lock()
    faults: list[Callable[[], Reply]] = [
        lambda: Reply.rate_limited(0.01),
        Reply.server_error,
        lambda: Reply.timeout(timeout_s),
        Reply.drop,
        Reply.truncated_body,
        lambda: Reply.truncated_json({"score": 7, "reason": "cut"}),
        lambda: Reply.json({"score": 999, "reason": "out of range"}),
    ]

    def handler(req: dict[str, Any]) -> Reply | str | dict[str, Any]:
        with lock:
            roll, pick = rng.random(), rng.randrange(len(faults))
        return faults[pick]() if roll < rate else base(req)

    return handler


# --------------------------------------------------------------------------- HTTP


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 3)


def hold_port() -> socket.socket:
    """A bound, never-listening socket on a free loopback port (SO_REUSEPORT): pass its port to
    `FakeServer(port=..., reuse_port=True)`; while it is open nobody else can bind the port, and once the
    server stops, connections to it are refused — as to a dead server — for as long as the test needs."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(("127.0.0.1", 0))
    return holder


class FakeServer:
    """The server; `start()` runs it in a daemon thread with its own event loop."""

    def __init__(self, handler: Handler | None = None, *, latency: float = 0.0, capacity: int | None = None,
                 model: str = "fake-model", port: int = 0, reuse_port: bool = False) -> None:
        self.handler: Handler = handler or default_handler
        self._wanted_port = port  # 0: any free port
        self._reuse_port = reuse_port  # share `port` with a socket the caller holds (SO_REUSEPORT)
        self.latency = latency
        self.capacity = capacity
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.log: list[Recorded] = []
        self.answered: set[str] = set()
        self.repeated = 0
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._ids = 0
        self._open: dict[asyncio.Task[None], asyncio.StreamWriter] = {}  # accepted connections not yet closed

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        self.requests.clear()
        self.log.clear()
        self.answered.clear()
        self.repeated = 0

    # ---- lifecycle
    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self._run, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    def stop(self) -> None:
        """Close the port and drop every connection (in-flight requests are cut); a second call does nothing."""
        if self._loop and self._stop and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread:
            self._thread.join(10)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        """The server's own loop, closed when it stops. Not `asyncio.run`: a library may have replaced it for the
        whole process — inspect_ai's `eval_async` applies nest_asyncio2, whose `run` neither cancels what is left
        nor closes the loop — and a stopped server must not depend on it (see `serve`)."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.serve(self._wanted_port))
        finally:
            loop.close()

    async def serve(self, port: int = 0, on_ready: Callable[[int], None] | None = None) -> None:
        """Serve until stopped (usable directly in a process's main loop)."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._slots = asyncio.Semaphore(self.capacity) if self.capacity else None
        server = await asyncio.start_server(self._connection, "127.0.0.1", port, backlog=1024,
                                            reuse_port=self._reuse_port or None)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready:
            on_ready(self.port)
        async with server:
            await self._stop.wait()
            server.close()
            await self._drop_connections()

    async def _drop_connections(self) -> None:
        """Cut every accepted connection and wait until its socket is closed, before `stop()` returns.

        Why here and not by the loop's shutdown: a stopped server whose keep-alive connections stay open is not
        dead to its clients — a pooled connection then takes the next request and nobody answers it (the client
        waits out its timeout, not a refusal). That happened once a test earlier in the process had made
        `asyncio.run` nest_asyncio2's (issue 33: the judge-outage tests timed out after tests/inspect_eval)."""
        cut = list(self._open.items())
        for task, writer in cut:
            writer.transport.abort()  # the socket is closed on the loop's next turn (connection_lost)
            task.cancel()
        await asyncio.gather(*(task for task, _ in cut), return_exceptions=True)
        for _, writer in cut:
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    # ---- connection handling
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._open[task] = writer
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                keep_open = await self._respond(request, writer)
                if not keep_open:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError, ValueError):
            pass
        finally:
            self._open.pop(task, None)
            with contextlib.suppress(Exception):
                writer.close()

    async def _respond(self, request: Recorded, writer: asyncio.StreamWriter) -> bool:
        self.log.append(request)
        wants_close = request.headers.get("connection", "").lower() == "close"
        if request.method == "GET" and request.path.rstrip("/") in ("/health", "/v1/health"):
            await _write(writer, 200, {"status": "ok"})
        elif request.method == "GET" and request.path.rstrip("/") == "/v1/models":
            await _write(writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
        elif request.method == "POST" and request.path.rstrip("/") == "/v1/chat/completions":
            if request.body is None:
                await _write(writer, 400, _error_body("body is not JSON"))
            else:
                self.requests.append(request.body)
                digest = body_digest(request.body)
                self.repeated += digest in self.answered
                kept = await self._chat(request.body, writer, digest)
                return kept and not wants_close
        else:
            await _write(writer, 404, _error_body(f"no route {request.method} {request.path}"))
        return not wants_close

    async def _chat(self, body: dict[str, Any], writer: asyncio.StreamWriter, digest: str = "") -> bool:
        if self._slots is None:
            return await self._chat_in_slot(body, writer, digest)
        async with self._slots:
            return await self._chat_in_slot(body, writer, digest)

    async def _chat_in_slot(self, body: dict[str, Any], writer: asyncio.StreamWriter, digest: str = "") -> bool:
        reply = _as_reply(self.handler(body))
        wait = self.latency + reply.delay
        if wait > 0:
            await asyncio.sleep(wait)
        if reply.fault == "timeout":
            await asyncio.sleep(reply.timeout_s)
            return False
        if reply.fault == "drop":
            writer.transport.abort()
            return False
        if reply.status != 200:
            headers = {"Retry-After": _fmt_seconds(reply.retry_after)} if reply.retry_after is not None else {}
            await _write(writer, reply.status, _error_body(reply.error_message, reply.status), headers)
            return True
        payload = self._completion(body, reply)
        self.answered.add(digest)  # the completion is made (and billed) whether or not the client reads it
        if reply.fault == "truncate_body":
            raw = json.dumps(payload).encode()
            writer.write(_head(200, len(raw), {}) + raw[: len(raw) // 2])
            await writer.drain()
            return False
        await _write(writer, 200, payload)
        return True

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        self._ids += 1
        prompt_chars = "".join(str(m.get("content", "")) for m in body.get("messages", []))
        usage = reply.usage or {
            "prompt_tokens": _approx_tokens(prompt_chars) + 4 * len(body.get("messages", [])),
            "completion_tokens": _approx_tokens(reply.content),
        }
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        if reply.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
        return {
            "id": f"chatcmpl-fake-{self._ids}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                         "finish_reason": reply.finish_reason}],
            "usage": usage,
        }


def body_digest(body: dict[str, Any]) -> str:
    """sha256 of a request body's canonical JSON: the same request sent again has the same digest."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _as_reply(value: Reply | str | dict[str, Any]) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.json(value)


def _fmt_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _error_body(message: str, status: int = 400) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_error", "code": status}}


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    """Parse one HTTP/1.1 request; None on a clean EOF between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raw = await _read_chunked(reader)
    else:
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
    body: dict[str, Any] | None = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
    return Recorded(method, path.split("?", 1)[0], headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _head(status: int, length: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "Content-Type: application/json",
             f"Content-Length: {length}", "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _write(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any],
                 headers: dict[str, str] | None = None) -> None:
    raw = json.dumps(payload, ensure_ascii=False).encode()
    writer.write(_head(status, len(raw), headers or {}) + raw)
    await writer.drain()


# --------------------------------------------------------------------------- subprocess mode


@dataclass
class FakeServerProcess:
    """The server in a child process (no shared GIL with the client); chat requests are not recorded here."""

    latency: float = 0.0
    capacity: int | None = None
    fault_rate: float = 0.0
    seed: int = 0
    port: int = 0
    _proc: subprocess.Popen[str] | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        assert self._proc is not None, "not started"
        return self._proc.pid

    def __enter__(self) -> FakeServerProcess:
        cmd = [sys.executable, __file__, "--latency", str(self.latency), "--fault-rate", str(self.fault_rate),
               "--seed", str(self.seed)]
        if self.capacity:
            cmd += ["--capacity", str(self.capacity)]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.startswith("PORT "):
            self._proc.kill()
            raise RuntimeError(f"fake server process did not start: {line!r}")
        self.port = int(line.split()[1])
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def _main() -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--capacity", type=int, default=None)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    handler = fault_handler(args.fault_rate, args.seed) if args.fault_rate > 0 else default_handler
    server = FakeServer(handler, latency=args.latency, capacity=args.capacity)
    server.requests = _Discard()  # a long benchmark must not grow memory
    server.log = _Discard()

    def ready(port: int) -> None:
        print(f"PORT {port}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(args.port, ready))


class _Discard(list):  # type: ignore[type-arg]
    def append(self, _item: Any) -> None:
        pass


if __name__ == "__main__":
    _main()
