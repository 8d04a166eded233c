"""The fake server speaks real HTTP and injects the faults it promises."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest

from fake_server import FakeServer, FakeServerProcess, Reply, schema_instance, script


def _post(url: str, body: dict[str, Any], timeout: float = 5) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


BODY = {"model": "m", "messages": [{"role": "user", "content": "你好"}]}


def test_echo_usage_and_record(fake_server: FakeServer) -> None:
    status, _, raw = _post(fake_server.base_url, BODY)
    reply = json.loads(raw)
    assert status == 200
    assert reply["choices"][0]["message"]["content"] == "echo: 你好"
    assert reply["usage"]["prompt_tokens"] >= 1 and reply["usage"]["completion_tokens"] >= 1
    assert fake_server.requests == [BODY]


def test_scripted_faults(fake_server: FakeServer) -> None:
    fake_server.handler = script(Reply.rate_limited(0.5), Reply.server_error(), Reply.json({"score": 42},
                                 cached_tokens=3))
    status, headers, _ = _post(fake_server.base_url, BODY)
    assert status == 429 and headers["Retry-After"] == "0.5"
    assert _post(fake_server.base_url, BODY)[0] == 500
    status, _, raw = _post(fake_server.base_url, BODY)
    reply = json.loads(raw)
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"score": 42}
    assert reply["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    assert len(fake_server.requests) == 3


def test_drop_timeout_truncate(fake_server: FakeServer) -> None:
    fake_server.handler = script(Reply.drop(), Reply.timeout(2), Reply.truncated_body())
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        _post(fake_server.base_url, BODY)
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        _post(fake_server.base_url, BODY, timeout=0.2)
    with pytest.raises(Exception):  # noqa: B017 - http.client raises IncompleteRead
        json.loads(_post(fake_server.base_url, BODY)[2])


def test_schema_shaped_default() -> None:
    schema = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}, "why": {"type": "string"}},
              "required": ["score", "why"]}
    value = schema_instance(schema, seed=4)
    assert value["score"] in (1, 2, 3) and isinstance(value["why"], str)


def test_models_health_and_process() -> None:
    with FakeServerProcess(latency=0.0, capacity=2) as srv:
        with urllib.request.urlopen(srv.base_url + "/models", timeout=5) as resp:
            assert json.loads(resp.read())["data"][0]["id"] == "fake-model"
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/health", timeout=5) as resp:
            assert json.loads(resp.read()) == {"status": "ok"}
