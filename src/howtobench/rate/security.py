"""Sessions, CSRF and the browser-side defences of the rating app.

- A session is a random cookie (HttpOnly, SameSite=Strict) whose sha256 is stored in the study file, so a
  restarted server keeps everyone signed in. Signing in by name (no passwords: this is a local tool for
  people who trust each other) replaces the session, so a cookie planted before sign-in is worthless after.
- Every session carries a CSRF token. Each state-changing request (POST, PUT, PATCH, DELETE) must send it,
  in the `X-CSRF-Token` header (the page's script) or the `csrf` form field (plain forms), and may not come
  from another origin; otherwise 403 and nothing changes.
- Every response forbids framing, sniffing and referrers to other sites, and the Content-Security-Policy
  allows only this server's own script and style: even a writing that slipped past HTML escaping could not
  run a script.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from howtobench.rate.store import StudyStore

COOKIE_PREFIX = "howtobench_rate_"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_NAME = 60

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Session:
    """Who is asking (rater None: not signed in) and the token their changes must carry."""

    token: str
    csrf: str
    rater: str | None


SESSION = web.RequestKey("session", Session)


def new_session(store: StudyStore, rater: str | None) -> Session:
    session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), rater)
    store.add_session(session.token, session.csrf, rater)
    return session


def cookie_name(study_id: str) -> str:
    """One cookie per study: browsers share cookies across ports, so two studies served at once stay apart."""
    return COOKIE_PREFIX + study_id


def set_cookie(response: web.StreamResponse, cookie: str, session: Session) -> None:
    """The session cookie: never readable by scripts, never sent by another site (plain HTTP, so not Secure)."""
    response.set_cookie(cookie, session.token, httponly=True, samesite="Strict", path="/")


def check_name(raw: str) -> str:
    """A rater's name as typed (trimmed); refused when empty, too long or holding control characters."""
    name = " ".join(raw.split())
    if not name:
        raise ValueError("type your name to sign in")
    if len(name) > MAX_NAME:
        raise ValueError(f"a name has at most {MAX_NAME} characters")
    if any(not ch.isprintable() for ch in name):
        raise ValueError("a name cannot hold control characters")
    return name


def _same_origin(request: web.Request) -> bool:
    """A browser's Origin, when it names one, must be this server (privacy settings may send none or "null";
    the CSRF token still guards those)."""
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return True
    return urlsplit(origin).netloc == request.host


async def _sent_token(request: web.Request) -> str:
    token = request.headers.get(CSRF_HEADER)
    if token is None and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        value = (await request.post()).get(CSRF_FIELD)
        token = value if isinstance(value, str) else None
    return token or ""


def session_middleware(store: StudyStore, cookie: str) -> Middleware:
    """Attach `request[SESSION]`, refuse cross-site or token-less changes, add the security headers."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        token = request.cookies.get(cookie, "")
        found = store.session(token) if token else None
        fresh = found is None and not request.path.startswith("/static/")
        session = new_session(store, None) if fresh else Session(token, *(found or ("", None)))
        request[SESSION] = session
        try:
            if request.method not in SAFE_METHODS:
                sent = await _sent_token(request)
                if not _same_origin(request) or not hmac.compare_digest(sent.encode(), session.csrf.encode()):
                    raise _forbidden(request, "missing or wrong CSRF token (reload the page and try again)")
            response = await handler(request)
        except web.HTTPException as exc:
            _finish(exc, cookie, session if fresh else None)
            raise
        _finish(response, cookie, session if fresh else None)
        return response

    return middleware


def _finish(response: web.StreamResponse, cookie: str, fresh: Session | None) -> None:
    response.headers.update(HEADERS)
    if fresh is not None:
        set_cookie(response, cookie, fresh)


def _forbidden(request: web.Request, reason: str) -> web.HTTPException:
    if request.path.startswith("/api/"):
        return web.HTTPForbidden(text=json.dumps({"error": reason}), content_type="application/json")
    return web.HTTPForbidden(text=reason)
