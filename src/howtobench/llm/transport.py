"""The one seam between the client and the network, and the one HTTP stack behind it: aiohttp.

`Transport` is a small Protocol (post JSON bytes, get, close) so the client logic — retries,
cache, structured output — never touches an HTTP library, and tests can swap the network at
this one place (as httpx's mock transport does). `AiohttpTransport` is the real one; its sessions come from
`howtobench.http.new_session`, the bottom-layer factory the batch API, the dataset download and the local
server's health check use too, so every request the toolkit makes shares the same TLS, proxy, timeout and
User-Agent rules:

- TLS: a default context made when the session opens, so `SSL_CERT_FILE` / `SSL_CERT_DIR` (read by
  OpenSSL) add a private CA, e.g. a self-signed server's certificate.
- Proxies: the standard *_PROXY / NO_PROXY variables (`config.proxy_for`), resolved once per origin.
- Redirects are followed (aiohttp's rules: 307/308 keep the POST); compressed and chunked bodies are
  decoded; HTTP/1.0 servers that close after each response are handled.
- A connection must be made within `connect_timeout_s` (10 s), the whole exchange within the call's timeout.

- A body is read up to `max_reply_bytes` (`MAX_REPLY_BYTES`, 16 MiB: a long writing is a few hundred KB): a
  server that sends more, or an endless body, is refused as "too_large" before it fills the memory; the
  call's timeout bounds the whole exchange, body included, so a body that drips in slowly ends too.

Every failure to get a complete response is raised as `TransportError` with a `kind` the client
acts on: "connect" (refused, DNS, connect timeout, proxy unreachable: counts against the URL's
circuit breaker), "timeout", "dropped", "truncated" (transient: retried), "tls", "redirect", "proxy",
"url" (a setting is wrong: retries cannot help), "too_large" (the endpoint misbehaves: not retried).
Messages carry the URL with its secrets redacted.

Why aiohttp and not a hand-written client: against a 640 calls/s loopback server a bare aiohttp
loop reached 595–612 calls/s on an idle 2-core machine, the same as a minimal raw asyncio loop, so
a client of our own bought no speed and missed HTTP details (DESIGN.md; `bench/throughput.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol

import aiohttp
from yarl import URL

from howtobench.config import proxy_for
from howtobench.http import CONNECT_TIMEOUT_S, HttpResponse, TransportError, classify, new_session
from howtobench.redact import redact_url

__all__ = ["AiohttpTransport", "HttpResponse", "Transport", "TransportError", "read_capped"]

MAX_REPLY_BYTES = 16 * 1024 * 1024

class Transport(Protocol):
    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse: ...

    async def get(self, url: str, timeout_s: float) -> HttpResponse: ...

    async def close(self) -> None: ...


async def read_capped(resp: aiohttp.ClientResponse, limit: int, url: str) -> bytes:
    """The whole body of `resp`, or TransportError("too_large") once it passes `limit` bytes (read no further)."""
    declared = resp.content_length
    if declared is not None and declared <= limit:
        return await resp.read()
    if declared is not None:
        raise _too_large(url, limit, f"it announced {declared:,} bytes")
    chunks, size = [], 0
    async for chunk in resp.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise _too_large(url, limit, "it kept sending")
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(url: str, limit: int, how: str) -> TransportError:
    return TransportError("too_large", f"{redact_url(url)} sent a reply over the limit of {limit:,} bytes ({how}); "
                                       "no model reply is that long: check the base URL points at the model server")


class AiohttpTransport:
    """Model calls over pooled keep-alive aiohttp connections.

    One session per event loop: a session belongs to the loop it was made in, and a client may be
    used from several `asyncio.run` calls in turn (each gets its own session; one left behind by a
    closed loop is dropped without touching that loop).
    """

    def __init__(self, *, connect_timeout_s: float = CONNECT_TIMEOUT_S, max_reply_bytes: int = MAX_REPLY_BYTES
                 ) -> None:
        self._connect_timeout_s = connect_timeout_s
        self._max_reply_bytes = max_reply_bytes
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._proxies: dict[str, str | None] = {}
        self._urls: dict[str, URL] = {}
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None:
            self._drop_dead_loops()
            session = self._sessions[loop] = new_session(connect_timeout_s=self._connect_timeout_s)
        return session

    def _drop_dead_loops(self) -> None:
        """Forget sessions whose loop has closed (the caller never closed them there).

        Their connectors are marked closed without touching the dead loop; the sockets go with the
        garbage collector. Marking matters: aiohttp logs "Unclosed client session" for an open one.
        """
        for loop in [lp for lp in self._sessions if lp.is_closed()]:
            session = self._sessions.pop(loop)
            if session.connector is not None:
                session.connector._close()

    def _target(self, url: str, timeout_s: float) -> tuple[URL, str | None, aiohttp.ClientTimeout]:
        """Parsed URL, proxy and timeout of a request, each worked out once (they repeat on every call)."""
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = URL(url)
        origin = f"{parsed.scheme}://{parsed.host}:{parsed.port}"
        if origin not in self._proxies:
            self._proxies[origin] = proxy_for(url)
        timeout = self._timeouts.get(timeout_s)
        if timeout is None:
            timeout = self._timeouts[timeout_s] = aiohttp.ClientTimeout(
                total=timeout_s, sock_connect=min(timeout_s, self._connect_timeout_s))
        return parsed, self._proxies[origin], timeout

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        return await self._request("POST", url, body, {"Content-Type": "application/json", **headers}, timeout_s)

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        return await self._request("GET", url, None, {}, timeout_s)

    async def _request(self, method: str, url: str, body: bytes | None, headers: Mapping[str, str],
                       timeout_s: float) -> HttpResponse:
        target, proxy, timeout = self._target(url, timeout_s)
        try:
            async with self._session().request(
                method, target, data=body, headers=headers, timeout=timeout, proxy=proxy
            ) as resp:
                return HttpResponse(resp.status, resp.headers, await read_capped(resp, self._max_reply_bytes, url))
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            raise classify(exc, url, timeout_s) from None  # `from None`: the chained text may hold the raw URL

    async def close(self) -> None:
        """Close this loop's session (and forget those of loops already closed)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()
        self._drop_dead_loops()


