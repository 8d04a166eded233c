"""One way to open a panel: the judge and run jobs (`steps.judge.open_panel_judge`), `serve` (`serve.setup`) and the
`score` API open the members' clients with `steps.client.panel_clients`; the jobs and serve assemble the judge with
`judges.panel.build_panel` (`score` builds its Tree-of-Writing judges with the tree it was given)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import howtobench
from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.judges.panel import PanelJudge, PanelSpec
from howtobench.serve.setup import PanelClients, ServeSettings, open_service
from howtobench.steps import client as steps_client
from howtobench.steps.client import StepClient
from howtobench.steps.judge import open_panel_judge
from howtobench.steps.settings import Execution
from judge_replies import server_handler


def _panel(a: FakeServer, b: FakeServer) -> PanelSpec:
    return PanelSpec.model_validate({"judges": [
        {"name": name, "endpoint": EndpointConfig(model=f"model-{name}", base_urls=(server.base_url,))}
        for name, server in (("a", a), ("b", b))]})


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """(purpose, model) of every step client that `panel_clients` opens."""
    seen: list[tuple[str, str | None]] = []
    real = steps_client.step_client

    def recorded(endpoint: Any, execution: Execution, **kw: Any) -> AbstractAsyncContextManager[StepClient]:
        seen.append((kw["purpose"], endpoint.model if endpoint is not None else None))
        return real(endpoint, execution, **kw)

    monkeypatch.setattr(steps_client, "step_client", recorded)
    return seen


@asynccontextmanager
async def two_judges() -> AsyncIterator[tuple[FakeServer, FakeServer]]:
    with FakeServer(server_handler()) as a, FakeServer(server_handler()) as b:
        yield a, b


async def test_jobs_and_serve_open_a_panel_the_same_way(tmp_path: Path, bench_root: Path,
                                                        opened: list[tuple[str, str | None]]) -> None:
    async with two_judges() as (a, b):
        panel = _panel(a, b)
        members = [("judge a", "model-a"), ("judge b", "model-b")]
        execution = Execution(workspace=tmp_path / "jobs", preflight=False)
        async with open_panel_judge(panel, "tow", {}, execution, run_id="r", items=3) as (job_panel, in_flight):
            assert isinstance(job_panel, PanelJudge) and list(job_panel.judges) == ["a", "b"]
            assert in_flight >= 1
        assert opened == members
        opened.clear()
        settings = ServeSettings(endpoint=None, workspace=tmp_path / "serve", data_dir=bench_root, panel=panel)
        async with open_service(settings) as (state, client):
            assert isinstance(client, PanelClients) and list(client.members) == ["a", "b"]
            served = state.service.judges.for_reference(True)
            assert isinstance(served, PanelJudge) and list(served.judges) == ["a", "b"]
        assert opened == members  # each member's client named by its purpose, as the jobs name it
        opened.clear()
        judgment = await howtobench.ascore("写一篇短文", "# 标题\n\n山高水长。", panel=panel,
                                           workspace=tmp_path / "api")
        assert judgment.panel is not None and list(judgment.panel.members) == ["a", "b"]
        assert opened == members
