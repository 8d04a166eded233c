"""`howtobench.score(guard=...)`: skip makes no judge call for a looped writing; flag records the signals."""

from __future__ import annotations

from pathlib import Path

import howtobench
from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.guard.guard import SKIPPED_PREFIX

PARAGRAPH = "春天来了，河边的柳树抽出了新芽，孩子们在田野里放风筝，笑声传得很远很远。"


def test_score_guard_skip_and_flag(fake_server: FakeServer, tmp_path: Path) -> None:
    from test_api import handler  # the fake judge's replies of the API tests

    fake_server.handler = handler
    endpoint = EndpointConfig(model="fake-judge", base_urls=(fake_server.base_url,))
    looped = "\n\n".join([PARAGRAPH] * 30)
    skipped = howtobench.score("写一篇短文", looped, judge=endpoint, workspace=tmp_path, guard="skip")
    assert fake_server.requests == [] and skipped.status == "failed"
    assert skipped.failures[0].startswith(SKIPPED_PREFIX) and "loop_paragraphs" in skipped.failures[0]
    flagged = howtobench.score("写一篇短文", looped, judge=endpoint, workspace=tmp_path, guard="flag")
    assert flagged.status == "ok" and fake_server.requests
    assert "loop_paragraphs" in flagged.meta["guard"]["flags"]
