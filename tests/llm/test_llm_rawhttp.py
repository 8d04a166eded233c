"""The raw HTTP/1.1 client: body framings, compression, keep-alive reuse and its failure modes."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from fake_server import FakeServer
from howtobench.errors import ConfigError
from howtobench.llm.rawhttp import RawTransport
from howtobench.llm.transport import TransportError

Responder = Callable[[bytes], bytes | None]  # request head -> raw response (None: close without answering)


@dataclass
class RawServer:
    script: list[Responder] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/chat/completions"


@pytest.fixture
async def raw_server() -> AsyncIterator[RawServer]:
    """A loopback server answering each request with the next scripted raw response."""
    state = RawServer()
    script, connections = state.script, state.connections

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = [int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")]
                await reader.readexactly(length[0] if length else 0)
                raw = script.pop(0)(head)
                if raw is None:
                    break
                writer.write(raw)
                await writer.drain()
                if b"Connection: close" in raw:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    yield state
    server.close()


def ok(body: bytes, extra: str = "") -> Responder:
    return lambda _h: f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


async def test_content_length_and_keep_alive_reuse(raw_server: RawServer) -> None:
    script, conns, url = raw_server.script, raw_server.connections, raw_server.url
    script += [ok(b'{"a": 1}'), ok(b'{"a": 2}', "Retry-After: 3\r\n")]
    t = RawTransport()
    first = await t.post_json(url, b"{}", {"Authorization": "Bearer x"}, 5)
    second = await t.post_json(url, b"{}", {}, 5)
    await t.close()
    assert (first.status, first.body, second.body) == (200, b'{"a": 1}', b'{"a": 2}')
    assert second.headers["retry-after"] == "3" and len(conns) == 1


async def test_chunked_gzip_and_close_delimited(raw_server: RawServer) -> None:
    script, conns, url = raw_server.script, raw_server.connections, raw_server.url
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"4;ext=1\r\n{\"a\"\r\n5\r\n: 10}\r\n0\r\nX-T: 1\r\n\r\n")
    zipped = gzip.compress(b'{"z": true}')
    script += [lambda _h: chunked, ok(zipped, "Content-Encoding: gzip\r\n"),
               lambda _h: b"HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nplain error"]
    t = RawTransport()
    assert (await t.post_json(url, b"{}", {}, 5)).body == b'{"a": 10}'
    assert (await t.post_json(url, b"{}", {}, 5)).body == b'{"z": true}'
    err = await t.post_json(url, b"{}", {}, 5)
    await t.close()
    assert (err.status, err.body) == (500, b"plain error") and len(conns) == 1


async def test_dropped_and_truncated_raise_and_are_not_reused(raw_server: RawServer) -> None:
    script, conns, url = raw_server.script, raw_server.connections, raw_server.url
    script += [lambda _h: None, lambda _h: b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"cut", ok(b"{}")]
    t = RawTransport()
    with pytest.raises(TransportError, match="connection"):
        await t.post_json(url, b"{}", {}, 5)
    with pytest.raises(TransportError):
        await t.post_json(url, b"{}", {}, 0.5)
    assert (await t.post_json(url, b"{}", {}, 5)).status == 200
    await t.close()
    assert len(conns) == 3


async def test_connection_closed_while_idle_is_discarded(fake_server: FakeServer) -> None:
    t = RawTransport()
    target = fake_server.base_url + "/chat/completions"
    assert (await t.post_json(target, b'{"messages": []}', {}, 5)).status == 200
    for _, writer in t._idle[("http", "127.0.0.1", fake_server.port)]:
        writer.transport.get_extra_info("socket").shutdown(0)  # as if the server had sent FIN
    await asyncio.sleep(0.05)
    assert (await t.post_json(target, b'{"messages": []}', {}, 5)).status == 200
    await t.close()


async def test_refused_timeout_and_header_injection() -> None:
    t = RawTransport()
    with pytest.raises(TransportError, match="connection"):
        await t.post_json("http://127.0.0.1:9/v1/x", b"{}", {}, 2)
    with pytest.raises(ConfigError, match="holds a line break") as info:
        await t.post_json("http://127.0.0.1:9/v1/x", b"{}", {"Authorization": "Bearer sk-1\r\nX: y"}, 2)
    assert "sk-1" not in str(info.value)
    with pytest.raises(TransportError, match="url"):
        await t.post_json("ftp://x/y", b"{}", {}, 2)
    await t.close()


async def test_interim_and_bodiless_responses(raw_server: RawServer) -> None:
    script, url = raw_server.script, raw_server.url
    script += [lambda _h: b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
               ok(b"{}")]
    t = RawTransport()
    first = await t.post_json(url, b"{}", {}, 2)
    second = await t.post_json(url, b"{}", {}, 2)
    await t.close()
    assert (first.status, first.body, second.status) == (204, b"", 200) and len(raw_server.connections) == 1
