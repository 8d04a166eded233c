"""Issue 13, point 11: the aiohttp transport against the HTTP that real servers and networks speak.

HTTP/1.0 servers, chunked and gzip bodies, interim responses, TLS with a private CA (SSL_CERT_FILE),
an HTTP proxy from the *_PROXY variables, redirects, the connect timeout, and one transport used from
several event loops.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import http.server
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from llm_helpers import FAST_RETRY, req

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError, PermanentError, Unreachable
from howtobench.llm.client import open_client
from howtobench.llm.transport import AiohttpTransport, TransportError

Responder = Callable[[bytes], bytes | None]  # request head -> raw response (None: close without answering)
COMPLETION = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"},
                                      "finish_reason": "stop"}]}).encode()


@dataclass
class RawServer:
    """A loopback server answering each request with the next scripted raw response (or `default`)."""

    script: list[Responder] = field(default_factory=list)
    heads: list[bytes] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    default: Responder | None = None
    port: int = 0
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/v1/chat/completions"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head)
                length = [int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")]
                await reader.readexactly(length[0] if length else 0)
                respond = self.script.pop(0) if self.script else self.default
                raw = respond(head) if respond else None
                if raw is None:
                    break
                writer.write(raw)
                await writer.drain()
                if b"Connection: close" in raw:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        writer.close()


async def _serve(state: RawServer, ssl_context: ssl.SSLContext | None = None) -> asyncio.Server:
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0, ssl=ssl_context)
    state.port = server.sockets[0].getsockname()[1]
    return server


@pytest.fixture
async def raw_server() -> AsyncIterator[RawServer]:
    state = RawServer()
    server = await _serve(state)
    yield state
    server.close()


def ok(body: bytes, extra: str = "") -> Responder:
    return lambda _h: f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


async def test_keep_alive_chunked_gzip_interim_and_close_delimited(raw_server: RawServer) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"4;ext=1\r\n{\"a\"\r\n5\r\n: 10}\r\n0\r\nX-T: 1\r\n\r\n")
    raw_server.script += [
        ok(b'{"a": 1}', "Retry-After: 3\r\n"),
        lambda _h: chunked,
        ok(gzip.compress(b'{"z": true}'), "Content-Encoding: gzip\r\n"),
        lambda _h: b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
        lambda _h: b"HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nplain error",
    ]
    t = AiohttpTransport()
    got = [await t.post_json(raw_server.url, b"{}", {"Authorization": "Bearer x"}, 5) for _ in range(5)]
    await t.close()
    assert [(r.status, r.body) for r in got] == [
        (200, b'{"a": 1}'), (200, b'{"a": 10}'), (200, b'{"z": true}'), (204, b""), (500, b"plain error")]
    assert got[0].headers["retry-after"] == "3" and len(raw_server.connections) == 1


async def test_dropped_and_truncated_replies_raise_and_are_not_reused(raw_server: RawServer) -> None:
    raw_server.script += [lambda _h: None, lambda _h: b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"cut",
                          ok(b"{}")]
    t = AiohttpTransport()
    with pytest.raises(TransportError) as dropped:
        await t.post_json(raw_server.url, b"{}", {}, 5)
    with pytest.raises(TransportError) as cut:
        await t.post_json(raw_server.url, b"{}", {}, 0.5)
    assert (await t.post_json(raw_server.url, b"{}", {}, 5)).status == 200
    await t.close()
    assert dropped.value.kind == "dropped" and cut.value.kind in ("truncated", "timeout")
    assert len(raw_server.connections) == 3


class _Http10Handler(http.server.BaseHTTPRequestHandler):
    """Python's http.server as it comes: HTTP/1.0, one response per connection."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(COMPLETION)))
        self.end_headers()
        self.wfile.write(COMPLETION)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http10_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Http10Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_http10_server_200_sequential_requests_all_succeed(http10_server: str, tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=(http10_server,), max_retries=0)
    async with open_client(ep, workspace=tmp_path, cache_mode="off") as client:
        results = [await client.chat(req(f"q{i}")) for i in range(200)]
    assert [r.text for r in results] == ["hi"] * 200 and all(r.attempts == 1 for r in results)


# ------------------------------------------------------------------ TLS


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a self-signed certificate")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")], check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"


@pytest.fixture
async def tls_server(self_signed: tuple[Path, Path]) -> AsyncIterator[RawServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*self_signed)
    state = RawServer(default=ok(COMPLETION), scheme="https")
    server = await _serve(state, context)
    yield state
    server.close()


async def test_tls_with_a_self_signed_server_via_ssl_cert_file(tls_server: RawServer, self_signed: tuple[Path, Path],
                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EndpointConfig(model="m", base_urls=(f"https://127.0.0.1:{tls_server.port}/v1",))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(ConfigError, match="certificate.*point SSL_CERT_FILE at its certificate"):
            await client.chat(req("untrusted"))
    monkeypatch.setenv("SSL_CERT_FILE", str(self_signed[0]))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req("trusted"))
    assert result.ok and result.text == "hi"


# ------------------------------------------------------------------ proxy, redirects, timeouts


async def test_requests_go_through_the_proxy_named_by_http_proxy(raw_server: RawServer, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    raw_server.default = ok(COMPLETION)  # the "proxy" answers for the origin; what matters is what it was asked
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, f"http://proxyuser:proxy-S3CRET@127.0.0.1:{raw_server.port}")
    ep = EndpointConfig(model="m", base_urls=("http://judge.example/v1",))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req())
    head = raw_server.heads[0].decode()
    assert result.ok and head.startswith("POST http://judge.example/v1/chat/completions HTTP/1.1\r\n")
    assert "Proxy-Authorization: Basic " in head


async def test_redirects_are_followed_not_retried(raw_server: RawServer, tmp_path: Path) -> None:
    moved = f"http://127.0.0.1:{raw_server.port}/new/v1/chat/completions"
    raw_server.script += [lambda _h: f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {moved}\r\n"
                                     "Content-Length: 0\r\n\r\n".encode(), ok(COMPLETION)]
    ep = EndpointConfig(model="m", base_urls=(f"http://127.0.0.1:{raw_server.port}/v1",))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        result = await client.chat(req())
    assert result.ok and result.attempts == 1
    assert [h.split(b"\r\n")[0] for h in raw_server.heads] == [
        b"POST /v1/chat/completions HTTP/1.1", b"POST /new/v1/chat/completions HTTP/1.1"]


async def test_a_redirect_that_cannot_be_followed_is_permanent(raw_server: RawServer, tmp_path: Path) -> None:
    raw_server.default = lambda _h: b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n"  # no Location
    ep = EndpointConfig(model="m", base_urls=(f"http://127.0.0.1:{raw_server.port}/v1",))
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
        with pytest.raises(PermanentError, match="answered HTTP 302 .*Follow the redirect yourself"):
            await client.chat(req())
    assert len(raw_server.heads) == 1


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose accept queue is full: the kernel drops further SYNs, so a connect hangs (a black hole)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    held = [socket.create_connection(("127.0.0.1", port))]
    yield port
    for sock in held:
        sock.close()
    server.close()


async def test_connect_timeout_is_short_and_counts_as_unreachable(silent_port: int, tmp_path: Path) -> None:
    connect_s, call_s = 0.3, 30.0
    t = AiohttpTransport(connect_timeout_s=connect_s)
    start = time.monotonic()
    with pytest.raises(TransportError) as info:
        await t.post_json(f"http://127.0.0.1:{silent_port}/v1/chat/completions", b"{}", {}, call_s)
    assert info.value.kind == "connect" and time.monotonic() - start < 10 * connect_s
    ep = EndpointConfig(model="m", base_urls=(f"http://127.0.0.1:{silent_port}/v1",), timeout_s=call_s)
    async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY, transport=t) as client:
        with pytest.raises(Unreachable, match="no connection to .* within the connect timeout"):
            await client.chat(req())
    assert time.monotonic() - start < call_s / 2  # a few connect timeouts, never one call's timeout


def test_one_transport_across_event_loops(fake_server: FakeServer) -> None:
    t = AiohttpTransport()
    url = fake_server.base_url + "/chat/completions"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        statuses = [asyncio.run(t.post_json(url, b'{"messages": []}', {}, 5)).status for _ in range(3)]
        asyncio.run(t.close())
        gc.collect()
    assert statuses == [200, 200, 200]
    assert not [w for w in caught if "Unclosed client session" in str(w.message)]
