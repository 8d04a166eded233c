"""Issue 13, point 8: the one redaction function for URLs and the texts that carry them."""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.llm.client import open_client
from howtobench.redact import is_secret_param, redact_text, redact_url


@pytest.mark.parametrize(("url", "shown"), [
    ("http://localhost:8000/v1", "http://localhost:8000/v1"),
    ("http://user:pw@host:8000/v1", "http://***@host:8000/v1"),
    ("https://tok@host/v1", "https://***@host/v1"),
    ("https://h/openai/deployments/d?api-version=2024-06-01&api-key=abc",
     "https://h/openai/deployments/d?api-version=2024-06-01&api-key=***"),
    ("https://h/v1?api_key=a&key=b&token=c&access_token=d&sig=e&X-Amz-Signature=f&subscription-key=g&model=m",
     "https://h/v1?api_key=***&key=***&token=***&access_token=***&sig=***&X-Amz-Signature=***&subscription-key=***"
     "&model=m"),
    ("https://u:p@h/v1?Token=x#frag", "https://***@h/v1?Token=***#frag"),
    ("notaurl", "notaurl"),
    ("http://[::1", "http://[::1"),
    ("http://u:p@[::1", "***"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_names_that_are_not_credentials_stay() -> None:
    assert [is_secret_param(n) for n in ("api-version", "model", "keys_only", "tokenizer", "signed")] == [False] * 5


def test_redact_text_finds_urls_and_bearer_tokens() -> None:
    text = ("cannot connect to http://a:b@h:1/v1/chat/completions?api-key=k1 (refused); "
            "header was Authorization: Bearer sk-live-123; proxy https://p:q@proxy:3128.")
    assert redact_text(text) == ("cannot connect to http://***@h:1/v1/chat/completions?api-key=*** (refused); "
                                 "header was Authorization: Bearer ***; proxy https://***@proxy:3128.")


def test_punctuation_after_a_url_in_text_is_kept() -> None:
    """`cannot connect to http://***@h/v1?api-key=***: Connect call failed` lost its colon (the key's value took
    it), so the error line ran the URL into the cause."""
    said = redact_text("cannot connect to http://u:p@h:1/v1/chat?api-key=abc: Connect call failed (see http://h/x).")
    assert said == "cannot connect to http://***@h:1/v1/chat?api-key=***: Connect call failed (see http://h/x)."
    assert redact_text("at http://h/v1?sig=s3, then") == "at http://h/v1?sig=***, then"


def test_endpoint_public_form_is_redacted() -> None:
    ep = EndpointConfig(model="m", base_urls=("http://u:pw@h/v1", "https://h2/v1?key=abc"), api_key_env="K")
    assert ep.public()["base_urls"] == ["http://***@h/v1", "https://h2/v1?key=***"]
    assert ep.base_urls == ("http://u:pw@h/v1", "https://h2/v1?key=abc")  # the real ones are still used


async def test_a_redacted_url_read_back_from_a_run_config_is_a_clear_error(tmp_path: Path) -> None:
    ep = EndpointConfig(model="m", base_urls=("http://***@h/v1",))
    with pytest.raises(ConfigError, match="holds a redacted credential"):
        async with open_client(ep, workspace=tmp_path):
            pass
