"""Where the rating app listens: loopback by default, a warning anywhere else."""

from __future__ import annotations

import pytest

from howtobench.rate.server import DEFAULT_HOST, exposure_warning


@pytest.mark.parametrize("host", [DEFAULT_HOST, "localhost", "127.0.0.2", "::1"])
def test_loopback_needs_no_warning(host: str) -> None:
    assert exposure_warning(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "rating.example"])
def test_any_other_address_is_announced(host: str) -> None:
    warning = exposure_warning(host)
    assert warning is not None and host in warning and "no passwords" in warning


def test_default_host_is_loopback() -> None:
    assert DEFAULT_HOST == "127.0.0.1"
