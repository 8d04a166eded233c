"""Issue 23, defect 1: a secret a server echoes back never reaches an error, the call log or `llm usage`.

Proxies and 404 pages repeat the request path (`/v1/chat/completions?api-key=...`) without the scheme and host
a URL redaction could recognise; some repeat the user name and password of the URL, or the key itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from llm_helpers import FAST_RETRY, req

from fake_server import FakeServer, Reply, script
from howtobench.config import EndpointConfig
from howtobench.errors import HowtobenchError
from howtobench.llm.client import open_client
from howtobench.redact import redact_text

QUERY_SECRET = "qs-9f8e7d6c5b4a"
PASSWORD = "pw-hunter2-xyz"
KEY = "sk-echoed-key-123456"


def _log_text(workspace: Path) -> str:
    db = sqlite3.connect(workspace / "calls.sqlite")
    try:
        return "\n".join(str(row) for row in db.execute("SELECT * FROM calls"))
    finally:
        db.close()


@pytest.mark.parametrize("status", [401, 500])
async def test_a_path_echoed_with_its_query_key_is_masked(status: int, fake_server: FakeServer,
                                                          tmp_path: Path) -> None:
    fake_server.handler = script(*[Reply.error(status, f"no route /v1/chat/completions?api-key={QUERY_SECRET}")] * 9)
    ep = EndpointConfig(model="m", base_urls=(f"{fake_server.base_url}?api-key={QUERY_SECRET}",), timeout_s=2,
                        max_retries=1)
    with pytest.raises(HowtobenchError) as raised:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            await client.chat(req())
    assert QUERY_SECRET not in str(raised.value)
    assert "api-key=***" in str(raised.value)
    log = _log_text(tmp_path)
    assert "stopped" in log and QUERY_SECRET not in log


async def test_echoed_userinfo_is_masked(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = script(Reply.error(403, f"user alice:{PASSWORD} is not allowed (password {PASSWORD})"))
    host = fake_server.base_url.removeprefix("http://")
    ep = EndpointConfig(model="m", base_urls=(f"http://alice:{PASSWORD}@{host}",), timeout_s=2)
    with pytest.raises(HowtobenchError) as raised:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            await client.chat(req())
    assert str(raised.value).endswith("answered HTTP 403 for model m: user *** is not allowed (password ***). Check "
                                      "the base URL, the model name and the API key variable (none).")
    assert PASSWORD not in _log_text(tmp_path)


async def test_an_echoed_key_is_masked(fake_server: FakeServer, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_KEY", KEY)
    fake_server.handler = script(*[Reply.error(500, f"upstream refused key {KEY}")] * 3)
    ep = EndpointConfig(model="m", base_urls=(fake_server.base_url,), api_key_env="ECHO_KEY", timeout_s=2,
                        max_retries=1)
    with pytest.raises(HowtobenchError) as raised:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            await client.chat(req())
    assert KEY not in str(raised.value) and "upstream refused key ***" in str(raised.value)
    assert KEY not in _log_text(tmp_path)


def test_remembered_values_are_masked_anywhere() -> None:
    from howtobench.redact import remember_secret, remember_url_secrets

    remember_url_secrets("https://bob:s3cr3t-pass@h/v1?api-version=2024&sig=sig-value-77")
    remember_secret("sk-remembered-0001")
    assert redact_text("bob s3cr3t-pass sig-value-77 sk-remembered-0001 2024") == "bob *** *** *** 2024"


def test_a_short_value_is_not_masked_as_a_literal() -> None:
    from howtobench.redact import remember_secret

    remember_secret("ab")
    assert redact_text("a tab") == "a tab"


async def test_the_basic_credentials_echoed_percent_encoded_are_masked(fake_server: FakeServer,
                                                                       tmp_path: Path) -> None:
    """Issue 34, item 11: a server echoing the Basic header of a URL's userinfo percent-encoded (`...%3D%3D`) in
    its error: masked on the error line and in the call log, as every other echoed form already was."""
    import base64
    from urllib.parse import quote

    userinfo = "carol:pa ss/w+rd=12"
    basic = base64.b64encode(userinfo.encode()).decode()
    assert basic.endswith("=")
    fake_server.handler = script(*[Reply.error(403, f"denied /v1?auth={quote(basic, safe='')} "
                                                    f"user {quote(userinfo, safe='')} form {quote(basic)}")] * 3)
    host = fake_server.base_url.removeprefix("http://")
    ep = EndpointConfig(model="m", base_urls=(f"http://carol:{quote('pa ss/w+rd=12', safe='')}@{host}",), timeout_s=2)
    with pytest.raises(HowtobenchError) as raised:
        async with open_client(ep, workspace=tmp_path, retry=FAST_RETRY) as client:
            await client.chat(req())
    said, log = str(raised.value), _log_text(tmp_path)
    for form in (basic, quote(basic, safe=""), quote(basic, safe="").lower(), basic.rstrip("="),
                 quote(userinfo, safe=""), "pa ss/w+rd=12", quote("pa ss/w+rd=12", safe="")):
        assert form not in said and form not in log, form
    assert "denied /v1?auth=*** user *** form ***" in said


def test_every_derived_encoding_of_a_key_is_masked() -> None:
    from urllib.parse import quote, quote_plus

    from howtobench.redact import remember_secret

    key = "sk-k3y/with+odd=chars"
    remember_secret(key)
    for form in (key, quote(key, safe=""), quote(key), quote_plus(key), quote(key, safe="").lower()):
        assert redact_text(f"[{form}]") == "[***]", form
