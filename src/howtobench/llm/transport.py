"""The one seam between the client and the network.

`Transport` is a small Protocol (post JSON bytes, get, close) so the client logic — retries,
cache, structured output — never touches an HTTP library, and tests can swap the network at
this one place (as httpx's mock transport does).

Why aiohttp: measured against a 640 calls/s loopback server (64 slots x 100 ms), a bare
`httpx.AsyncClient` loop costs ~9 ms CPU per call and the `openai` SDK ~1.5 ms, which caps a
2-core machine far below the server's capacity. aiohttp's C-accelerated HTTP parser costs a
few tenths of a millisecond per call, reaches >0.9 of capacity, and still gives us TLS,
proxies (resolved once per base URL), chunked and compressed bodies and connection pooling — which a
hand-written asyncio client would have to re-implement and keep correct.

Every connection-level problem (refused, reset, dropped, truncated body, timeout) is raised
as `TransportError`, which the client treats as transient.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import aiohttp

from howtobench.config import proxy_for


@dataclass(frozen=True)
class HttpResponse:
    """Status, headers (case-insensitive mapping) and the complete body."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class TransportError(Exception):
    """The request did not produce a complete HTTP response."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {detail}")


class Transport(Protocol):
    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse: ...

    async def get(self, url: str, timeout_s: float) -> HttpResponse: ...

    async def close(self) -> None: ...


class AiohttpTransport:
    """Pooled keep-alive connections; concurrency is bounded by the client, not here."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._proxies: dict[str, str | None] = {}

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
            )
        return self._session

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        all_headers = {"Content-Type": "application/json", **headers}
        return await self._request("POST", url, body, all_headers, timeout_s)

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        return await self._request("GET", url, None, {}, timeout_s)

    async def _request(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], timeout_s: float
    ) -> HttpResponse:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        origin = url.split("/", 3)[2]
        if origin not in self._proxies:
            self._proxies[origin] = proxy_for(url)
        proxy = self._proxies[origin]
        try:
            async with self._client().request(
                method, url, data=body, headers=headers, timeout=timeout, proxy=proxy
            ) as resp:
                raw = await resp.read()
                return HttpResponse(resp.status, resp.headers, raw)
        except asyncio.TimeoutError as exc:
            raise TransportError("timeout", f"no complete response from {url} within {timeout_s:g} s") from exc
        except aiohttp.ClientPayloadError as exc:
            raise TransportError("truncated", f"incomplete body from {url}: {exc}") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise TransportError("connection", f"{url}: {type(exc).__name__}: {exc}") from exc

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
