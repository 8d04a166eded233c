"""A small HTTP/1.1 keep-alive client on asyncio streams: the hot path of every model call.

Why not a library: against a 640 calls/s loopback server the client's CPU per call decides how
close to capacity we get on a small machine. DESIGN.md measured httpx at ~9 ms CPU per call and
the openai SDK at ~1.5 ms; here (2 shared cores, load ~8) a bare aiohttp loop cost 0.55-0.66 ms
and reached 0.59-0.63 of capacity, this transport 0.24-0.27 ms and 0.78-0.82 (a hand-rolled
minimal loop: 0.17-0.20 ms, 0.82-0.84). It does only what talking to OpenAI-compatible
servers needs — one request at a time per pooled connection, `Content-Length` or `chunked`
response bodies, gzip/deflate if a server compresses despite `Accept-Encoding: identity`,
TLS for https — and nothing else (no redirects, cookies, proxies: `transport.py` sends proxied
origins through aiohttp instead).

Any failure to get a complete response raises `TransportError`; a connection whose exchange
failed or timed out is closed, never reused. A pooled connection the server has closed while
idle (it sent FIN: the reader is at EOF) is discarded before use; one that closes exactly as we
send fails like any dropped connection, and the client's retry counts it as an attempt (a
silent re-send here would let a server see more requests than the call log records).
"""

from __future__ import annotations

import asyncio
import ssl
import sys
import zlib
from collections.abc import Coroutine, Mapping
from typing import Any
from urllib.parse import urlsplit

from howtobench.errors import ConfigError
from howtobench.llm.transport import HttpResponse, TransportError

_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_Origin = tuple[str, str, int]  # scheme, host, port


class RawTransport:
    """Pooled HTTP/1.1 connections per origin; bounded concurrency is the caller's job."""

    def __init__(self) -> None:
        self._idle: dict[_Origin, list[_Conn]] = {}
        self._targets: dict[str, tuple[_Origin, bytes]] = {}
        self._ssl: ssl.SSLContext | None = None

    # Plain functions returning the request coroutine: one coroutine frame fewer per call (see DefaultTransport).
    def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
                  ) -> Coroutine[Any, Any, HttpResponse]:
        return self._request(b"POST", url, body, headers, timeout_s)

    def get(self, url: str, timeout_s: float) -> Coroutine[Any, Any, HttpResponse]:
        return self._request(b"GET", url, b"", {}, timeout_s)

    async def close(self) -> None:
        for conns in self._idle.values():
            for _, writer in conns:
                writer.close()
        self._idle.clear()

    # ------------------------------------------------------------------ request

    async def _request(self, method: bytes, url: str, body: bytes, headers: Mapping[str, str],
                       timeout_s: float) -> HttpResponse:
        origin, head = self._target(url)
        payload = _request_head(method, head, body, headers) + body
        try:
            if sys.version_info >= (3, 11):
                async with asyncio.timeout(timeout_s):
                    return await self._exchange(origin, payload, method)
            return await asyncio.wait_for(self._exchange(origin, payload, method), timeout_s)
        except (TimeoutError, asyncio.TimeoutError) as exc:
            raise TransportError("timeout", f"no complete response from {url} within {timeout_s:g} s") from exc
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, zlib.error) as exc:
            raise TransportError("connection", f"{url}: {type(exc).__name__}: {exc}") from exc

    def _target(self, url: str) -> tuple[_Origin, bytes]:
        """(origin, request-line start) per URL, parsed once."""
        cached = self._targets.get(url)
        if cached is None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise TransportError("url", f"not an http(s) URL: {url!r}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            host = parts.netloc.rsplit("@", 1)[-1]  # as written, so IPv6 keeps its brackets
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            cached = ((parts.scheme, parts.hostname, port), f"{path} HTTP/1.1\r\nHost: {host}\r\n".encode())
            self._targets[url] = cached
        return cached

    async def _exchange(self, origin: _Origin, payload: bytes, method: bytes) -> HttpResponse:
        idle = self._idle.get(origin)
        while idle:
            reader, writer = conn = idle.pop()
            if not (reader.at_eof() or writer.is_closing()):
                return await self._send(origin, conn, payload, method)
            writer.close()  # closed by the server while idle
        return await self._send(origin, await self._connect(origin), payload, method)

    async def _connect(self, origin: _Origin) -> _Conn:
        scheme, host, port = origin
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            return await asyncio.open_connection(host, port, ssl=self._ssl, server_hostname=host)
        return await asyncio.open_connection(host, port)

    async def _send(self, origin: _Origin, conn: _Conn, payload: bytes, method: bytes) -> HttpResponse:
        reader, writer = conn
        keep = False
        try:
            writer.write(method + b" " + payload)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            status, headers = _parse_head(head)
            while 100 <= status < 200:  # interim responses (103 Early Hints, ...): the real one follows
                status, headers = _parse_head(await reader.readuntil(b"\r\n\r\n"))
            if status in (204, 304):  # no body by definition
                body, keep = b"", headers.get("connection", "").lower() != "close"
            else:
                body, keep = await _read_body(reader, headers)
            return HttpResponse(status, headers, body)
        finally:
            if keep:
                self._idle.setdefault(origin, []).append(conn)
            else:
                writer.close()


def _request_head(method: bytes, head: bytes, body: bytes, headers: Mapping[str, str]) -> bytes:
    lines = [head]
    if method == b"POST":
        lines.append(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body))
    lines.append(b"Accept-Encoding: identity\r\nUser-Agent: howtobench\r\n")
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            # never echo the value: it may be a key
            raise ConfigError(f"HTTP header {name} holds a line break (check the API key variable)")
        lines.append(f"{name}: {value}\r\n".encode("latin-1"))
    lines.append(b"\r\n")
    return b"".join(lines)


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """Status code and lower-cased header names of a response head."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> tuple[bytes, bool]:
    """The whole body and whether the connection may be reused."""
    keep = headers.get("connection", "").lower() != "close"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:  # delimited by the server closing the connection
        body, keep = await reader.read(), False
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("gzip", "deflate"):
        body = zlib.decompress(body, 47)  # 47: accept gzip or zlib headers
    return body, keep


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("chunk not terminated by CRLF")
