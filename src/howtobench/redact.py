"""Credentials out of every URL and message we store or print.

A base URL may carry a secret: `http://user:secret@host/v1` (userinfo) or `?api-key=...`, `?sig=...`
(query parameters). The request needs it; nothing else does. `redact_url` is the one function
that makes a URL safe to write — manifest, config.yaml, report, call log, error messages,
progress output — and `redact_text` applies it to every URL inside a free text (an exception
message, a server's error body) and hides bearer tokens.

    redact_url("https://u:p@h/v1?api-version=2024&api-key=s3")  -> "https://***@h/v1?api-version=2024&api-key=***"
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
# query parameter names (lower case, "-" read as "_") whose value is a credential
_SECRET_NAMES = {"key", "sig", "auth", "pwd", "pass", "code", "x_amz_credential", "authorization", "session"}
_SECRET_SUFFIXES = ("key", "token", "secret", "signature", "password", "credential")
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_SENTENCE_PUNCTUATION = ":;,.!?)"
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")


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
    """Every URL inside `text` redacted, and `Bearer <token>` / `Basic <credentials>` hidden."""
    text = _URL_IN_TEXT.sub(_redact_found, text)
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
