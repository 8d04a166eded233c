"""Credentials out of every URL and message we store or print.

A base URL may carry a secret: `http://user:secret@host/v1` (userinfo) or `?api-key=...`, `?sig=...`
(query parameters). The request needs it; nothing else does. `redact_url` is the one function
that makes a URL safe to write — manifest, config.yaml, report, call log, error messages,
progress output — and `redact_text` applies it to every URL inside a free text (an exception
message, a server's error body) and hides bearer tokens.

A server may also echo a secret outside any URL we could recognise: a 404 page that repeats the request
path (`/v1/chat/completions?api-key=s3`), a proxy that quotes the user name and password, a 401 that
repeats the key. So every secret the toolkit is given is remembered here (`remember_secret`,
`remember_url_secrets`: the endpoint settings call them the moment a URL or key is known), and
`redact_text` replaces each remembered value, wherever it appears, before anything else. One process
holds one set: the secrets are the process's own (its environment, its command line), and every text we
print or store passes through `redact_text` (the CLI's error line, the call log's error column, the
client's and the batch API's messages). Values shorter than `MIN_SECRET_CHARS` are not replaced as
literals (a one-letter password would mask every such letter); inside a URL they are still redacted.

    redact_url("https://u:p@h/v1?api-version=2024&api-key=s3")  -> "https://***@h/v1?api-version=2024&api-key=***"
"""

from __future__ import annotations

import base64
import re
import threading
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

MASK = "***"
# query parameter names (lower case, "-" read as "_") whose value is a credential
_SECRET_NAMES = {"key", "sig", "auth", "pwd", "pass", "code", "x_amz_credential", "authorization", "session"}
_SECRET_SUFFIXES = ("key", "token", "secret", "signature", "password", "credential")
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_SENTENCE_PUNCTUATION = ":;,.!?)"
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
MIN_SECRET_CHARS = 4
_known: set[str] = set()
_known_lock = threading.Lock()
_ordered: tuple[str, ...] = ()  # the remembered secrets, longest first (a key containing another is masked whole)


def percent_forms(value: str) -> set[str]:
    """`value` as written and as a server may echo it percent-encoded: every character but unreserved ones
    (`quote(safe="")`), a path's (`/` kept), a form's (`+` for space), each with upper- and lower-case hex."""
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    return forms | {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in forms}


def base64_forms(value: str) -> set[str]:
    """`value` in base64 as a Basic header or a URL-safe token carries it: standard, URL-safe, without padding."""
    raw = value.encode()
    standard, urlsafe = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    return {standard, urlsafe, standard.rstrip("="), urlsafe.rstrip("=")}


def remember_secret(value: str | None) -> None:
    """From now on `redact_text` masks `value` (an API key, a password) wherever it appears, also
    percent-encoded (`percent_forms`): a server that echoes a request path echoes it encoded."""
    global _ordered
    if not value or len(value) < MIN_SECRET_CHARS or value in _known:
        return
    with _known_lock:
        _known.update(percent_forms(value))
        _ordered = tuple(sorted(_known, key=len, reverse=True))


def remember_url_secrets(url: str) -> None:
    """Remember the credentials a URL carries: its userinfo (whole, user, password, and as the Basic header
    would send it, in base64: `base64_forms`; each also percent-encoded) and the values of its key-like query
    parameters (as written and percent-decoded)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, _, password = userinfo.partition(":")
        plain = f"{unquote(user)}:{unquote(password)}"
        for value in (userinfo, user, password, unquote(user), unquote(password), plain, *base64_forms(plain)):
            remember_secret(value)  # each also percent-encoded: `...%3D%3D`, the Basic header echoed in a URL
    for pair in parts.query.split("&") if parts.query else ():
        name, sep, value = pair.partition("=")
        if sep and is_secret_param(name):
            remember_secret(value)
            remember_secret(unquote(value))


def scrub_known(text: str) -> str:
    """`text` with every remembered secret replaced by ***."""
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def is_secret_param(name: str) -> bool:
    """True for query parameters that carry credentials (api-key, api_key, token, access_token, sig, ...)."""
    norm = name.strip().lower().replace("-", "_")
    return norm in _SECRET_NAMES or norm.endswith(_SECRET_SUFFIXES)


def redact_url(url: str) -> str:
    """`url` with its userinfo and the values of key-like query parameters replaced by ***; else unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url if "@" not in url else MASK  # unparseable and possibly holding a credential
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
    query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_pair(pair: str) -> str:
    name, sep, _value = pair.partition("=")
    return f"{name}={MASK}" if sep and is_secret_param(name) else pair


def _redact_found(found: re.Match[str]) -> str:
    """A URL found in text, redacted; punctuation after it ("...?api-key=s3: refused") is the sentence's, kept."""
    url = found.group(0).rstrip(_SENTENCE_PUNCTUATION)
    return redact_url(url) + found.group(0)[len(url):]


def redact_text(text: str) -> str:
    """Every remembered secret masked, every URL inside `text` redacted, `Bearer <token>` / `Basic <...>` hidden.

    The one scrubber of everything we print or store (see the module docstring)."""
    text = _URL_IN_TEXT.sub(_redact_found, scrub_known(text))
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
