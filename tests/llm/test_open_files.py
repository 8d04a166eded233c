"""Auto concurrency's cap (1,024 calls per URL) needs as many open files: the soft limit is raised toward the hard
one, and where even that leaves no room the cap is lowered to fit, with one warning line."""

from __future__ import annotations

import logging
import resource

import pytest

import howtobench.llm.open_files as open_files
from howtobench.config import EndpointConfig
from howtobench.llm.adaptive import slot_pool


class Limits:
    """RLIMIT_NOFILE as a test sets it: getrlimit/setrlimit on a pair, a hard limit that setrlimit cannot pass."""

    def __init__(self, soft: int, hard: int) -> None:
        self.soft, self.hard = soft, hard

    def get(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.soft, self.hard

    def set(self, which: int, limits: tuple[int, int]) -> None:
        if limits[0] > self.hard:
            raise ValueError("not allowed to raise maximum limit")
        self.soft, self.hard = limits


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> Limits:
    fake = Limits(1024, 1024)
    monkeypatch.setattr(open_files.resource, "getrlimit", fake.get)
    monkeypatch.setattr(open_files.resource, "setrlimit", fake.set)
    monkeypatch.setattr(open_files, "_wanted_so_far", 0)
    return fake


def test_the_soft_limit_is_raised_toward_the_hard_one_for_the_cap(limits: Limits) -> None:
    limits.hard = 65536
    endpoint = EndpointConfig(model="j", base_url=["http://a/v1", "http://b/v1"])
    _, levels = slot_pool(endpoint, ("a", "b"))
    assert levels is not None and [u.cap for u in levels.urls] == [1024, 1024]
    assert limits.soft == 2 * 1024 + open_files.RESERVE  # raised to what the two URLs need, not to the hard limit


def test_where_the_hard_limit_leaves_no_room_the_cap_fits_and_says_so(limits: Limits,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="howtobench.llm.open_files"):
        _, levels = slot_pool(EndpointConfig(model="j", base_url="http://a/v1"), ("a",))
    assert levels is not None and levels.urls[0].cap == 1024 - open_files.RESERVE
    assert limits.soft == 1024
    assert "at most 768 calls at once here, not 1024: the open-file limit is 1024" in caplog.text


def test_a_panel_raises_the_limit_for_every_endpoint_it_opened(limits: Limits) -> None:
    limits.hard = 65536
    for _ in range(3):
        slot_pool(EndpointConfig(model="j", base_url="http://a/v1"), ("a",))
    assert limits.soft == 3 * 1024 + open_files.RESERVE


def test_a_fixed_concurrency_leaves_the_limit_alone(limits: Limits) -> None:
    slot_pool(EndpointConfig(model="j", base_url="http://a/v1", concurrency=64), ("a",))
    assert (limits.soft, open_files._wanted_so_far) == (1024, 0)
