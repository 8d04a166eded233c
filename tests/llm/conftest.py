"""Fixtures of the client tests."""

from __future__ import annotations

import pytest

from fake_server import FakeServer
from howtobench.config import EndpointConfig


@pytest.fixture
def endpoint(fake_server: FakeServer) -> EndpointConfig:
    """The fake server as an endpoint with a short timeout (so timeout faults cost 0.5 s)."""
    return EndpointConfig(model="fake-model", base_urls=(fake_server.base_url,), timeout_s=0.5, concurrency=8)
