"""The fake server speaks real HTTP and injects the faults it promises."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
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


# ---- a stopped server is dead to its clients (issue 33)
# The judge-outage tests stop a FakeServer and restart it on its port. After tests/inspect_eval had run in the same
# process, the stopped server's keep-alive connections stayed open: inspect_ai's `eval_async` applies nest_asyncio2
# to the whole process, whose `asyncio.run` neither cancels what is left on the loop nor closes it, and the server
# relied on that to close its connections. The serve client's pooled connections then took the step's calls and
# nobody answered them (the 300 s call timeout, past the 60 s deadline), while new connections were refused.

def _pooled_connection(port: int) -> socket.socket:
    """A client connection that has had one answer and is kept alive, as an HTTP client's pool keeps it."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(b"GET /health HTTP/1.1\r\nHost: fake\r\n\r\n")
    assert conn.recv(65536).startswith(b"HTTP/1.1 200")
    return conn


def _closed_by_server(conn: socket.socket) -> bool:
    conn.settimeout(2.0)
    try:
        return conn.recv(100) == b""  # EOF: the server's end is closed
    except TimeoutError:
        return False  # still open: the next request sent on it would wait for nobody


def test_a_stopped_server_closes_its_connections_whatever_runs_its_loop() -> None:
    """`serve` itself closes what it accepted: its loop may stop with it and never run again (nest_asyncio2's
    `asyncio.run`), so nothing may be left for the loop's shutdown to do."""
    server = FakeServer()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),), daemon=True)
    thread.start()
    assert server._ready.wait(10)
    conn = _pooled_connection(server.port)
    try:
        server.stop()
        thread.join(10)
        assert _closed_by_server(conn)
    finally:
        conn.close()
        loop.close()


_UNDER_NEST_ASYNCIO = """
import socket, sys
import nest_asyncio2
nest_asyncio2.apply()  # what inspect_ai's eval_async does to the process (inspect_ai/_util/_async.py)
sys.path.insert(0, sys.argv[1])
from fake_server import FakeServer, hold_port
from test_fake_server import _closed_by_server, _pooled_connection
holder = hold_port()
port = holder.getsockname()[1]
server = FakeServer(port=port, reuse_port=True).start()
conn = _pooled_connection(port)
server.stop()
print("closed" if _closed_by_server(conn) else "open")
try:
    socket.create_connection(("127.0.0.1", port), timeout=2)
    print("accepted")
except ConnectionRefusedError:
    print("refused")
"""


def test_a_judge_stopped_under_nest_asyncio_is_dead_to_a_pooled_connection() -> None:
    """The condition of the outage tests after tests/inspect_eval, in a process of its own (nest_asyncio2 cannot be
    taken back): the stopped judge's kept-alive connection ends and its held port refuses new ones."""
    pytest.importorskip("nest_asyncio2", reason="comes with inspect-ai (the dev extra)")
    done = subprocess.run([sys.executable, "-c", _UNDER_NEST_ASYNCIO, str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["closed", "refused"]
