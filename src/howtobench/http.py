"""The one HTTP session factory of the toolkit (bottom layer: nothing here knows about models or data).

Model calls (`llm/transport.py`), the batch API (`llm/batch.py`), the dataset download (`data/download.py`) and
the local server's health check (`llm/server_process.py`) all open their aiohttp sessions with `new_session`, so
they share one set of rules: a TLS context made when the session opens (`SSL_CERT_FILE` / `SSL_CERT_DIR` add a
private CA), no cookies, the toolkit's User-Agent, a connection within `connect_timeout_s`, and no proxy lookup
per request by aiohttp (`trust_env=False`): callers pass `proxy=config.proxy_for(url)`, resolved once per origin.
`classify` turns an aiohttp exception into a `TransportError` whose `kind` says what went wrong, with the URL's
secrets redacted.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp

from howtobench.redact import redact_text, redact_url

CONNECT_TIMEOUT_S = 10.0
USER_AGENT = "howtobench"


@dataclass(frozen=True)
class HttpResponse:
    """Status, headers (case-insensitive mapping) and the complete body."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class TransportError(Exception):
    """The request did not produce a complete HTTP response; `kind` says why (see the module docstring)."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        super().__init__(detail)


def new_session(*, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> aiohttp.ClientSession:
    """An aiohttp session with the toolkit's rules (TLS context, no cookies, no env lookups per request).

    Must be called inside the event loop that will use it. Concurrency is bounded by the caller
    (the client's slot pool), so the connector has no limit of its own.
    """
    connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, ssl=ssl.create_default_context())
    return aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
        headers={"User-Agent": USER_AGENT}, timeout=aiohttp.ClientTimeout(sock_connect=connect_timeout_s),
    )


def classify(exc: BaseException, url: str, timeout_s: float) -> TransportError:
    """The `TransportError` for an exception raised by an aiohttp request (secrets redacted from the text)."""
    where = redact_url(url)
    detail = redact_text(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportError("connect", f"no connection to {where} within the connect timeout")
    if isinstance(exc, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError)):
        return TransportError("tls", f"{where}: {detail} (a private CA? point SSL_CERT_FILE at its certificate)")
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return TransportError("connect", f"cannot connect to {where}: {redact_text(reason)}")
    if isinstance(exc, asyncio.TimeoutError):
        return TransportError("timeout", f"no complete response from {where} within {timeout_s:g} s")
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return TransportError("proxy", f"the proxy refused the request to {where}: HTTP {exc.status} {exc.message}")
    if isinstance(exc, (aiohttp.TooManyRedirects, aiohttp.RedirectClientError)):
        return TransportError("redirect", f"{where}: {detail}")
    if isinstance(exc, (aiohttp.InvalidURL, aiohttp.NonHttpUrlClientError)):
        return TransportError("url", f"not a usable http(s) URL: {where}")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return TransportError("truncated", f"incomplete body from {where}: {detail}")
    return TransportError("dropped", f"{where}: {detail}")
