"""The one seam between the client and the network.

`Transport` is a small Protocol (post JSON bytes, get, close) so the client logic — retries,
cache, structured output — never touches an HTTP library, and tests can swap the network at
this one place (as httpx's mock transport does).

`DefaultTransport` sends each request over `rawhttp.RawTransport` (asyncio streams, ~0.1 ms
CPU per call) unless the standard *_PROXY variables route its origin through a proxy; those
go through aiohttp, which speaks to proxies. Why not one library for everything: against a
640 calls/s loopback server (64 slots x 100 ms) the client's CPU per call is what keeps it from
the server's capacity on a small machine, and aiohttp costs 2-3x the raw client (figures in
rawhttp.py; run bench/throughput.py).

Every connection-level problem (refused, reset, dropped, truncated body, timeout) is raised
as `TransportError`, which the client treats as transient.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

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
    """aiohttp with pooled keep-alive connections, for proxied origins; concurrency is bounded by the client."""

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


class DefaultTransport:
    """Direct origins over the raw asyncio client; origins behind a proxy over aiohttp."""

    def __init__(self) -> None:
        from howtobench.llm.rawhttp import RawTransport

        self._raw = RawTransport()
        self._proxied: AiohttpTransport | None = None
        self._routes: dict[str, bool] = {}

    def _route(self, url: str) -> Transport:
        origin = url.split("/", 3)[2] if "://" in url else url
        proxied = self._routes.get(origin)
        if proxied is None:
            proxied = self._routes[origin] = proxy_for(url) is not None
        if not proxied:
            return self._raw
        if self._proxied is None:
            self._proxied = AiohttpTransport()
        return self._proxied

    # Plain functions handing back the chosen transport's coroutine (no `async def` + `await`): one
    # coroutine frame fewer to create and to pass through on every resume of a model call.
    def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
                  ) -> Coroutine[Any, Any, HttpResponse]:
        return self._route(url).post_json(url, body, headers, timeout_s)

    def get(self, url: str, timeout_s: float) -> Coroutine[Any, Any, HttpResponse]:
        return self._route(url).get(url, timeout_s)

    async def close(self) -> None:
        await self._raw.close()
        if self._proxied is not None:
            await self._proxied.close()
