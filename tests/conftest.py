"""Shared pytest fixtures. ADD fixtures here; never rewrite someone else's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fake_server import FakeServer


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """A started fake OpenAI-compatible server on loopback (see tests/fake_server.py for the API)."""
    with FakeServer() as server:
        yield server
