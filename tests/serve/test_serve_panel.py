"""`serve --panel`: the reward of a sample is the panel's score, the mean of each judge's own root."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_server import FakeServer
from howtobench.data.loader import load_items
from howtobench.data.models import Writing
from howtobench.judges.panel import PanelSpec
from howtobench.judges.runner import judge_or_fail
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.client import open_client
from howtobench.serve.setup import PanelClients, ServeSettings
from judge_replies import first_user, judge_reply, leaf_score, schema_of, server_handler
from reward_serving import GUIDE, endpoint_of, openrlhf_body, running

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(3)]


def other(request: dict) -> dict:
    """A second judge scoring each leaf by another hash of the same prompt."""
    if schema_of(request)[0] == "weights":
        return judge_reply(request)
    return {"analysis": "b", "score": leaf_score(first_user(request) + " ")[1]}


async def roots(server: FakeServer, workspace: Path, data: Path) -> list[float | None]:
    item = next(i for i in load_items(data, ["guide"]) if i.id == GUIDE.split("/")[1])
    async with open_client(endpoint_of(server), workspace=workspace) as client:
        judge = TreeOfWriting(client)
        return [(await judge_or_fail(judge, item, Writing(infer_id=item.id, model="policy", output=r))).score
                for r in RESPONSES]


async def test_get_reward_with_a_panel_is_the_mean_of_the_judges_roots(tmp_path: Path, bench_root: Path) -> None:
    with FakeServer(server_handler()) as a, FakeServer(server_handler(other)) as b:
        expected_a = await roots(a, tmp_path / "da", bench_root)
        expected_b = await roots(b, tmp_path / "db", bench_root)
        assert expected_a != expected_b
        panel = PanelSpec.model_validate({"judges": [{"name": "a", "endpoint": endpoint_of(a)},
                                                     {"name": "b", "endpoint": endpoint_of(b)}]})
        settings = ServeSettings(endpoint=None, workspace=tmp_path / "ws", data_dir=bench_root, panel=panel)
        async with running(settings) as app:
            assert isinstance(app.state.service.judges.client, PanelClients)
            status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES, GUIDE))
    assert status == 200
    assert answer["rewards"] == pytest.approx([(x + y) / 2 for x, y in zip(expected_a, expected_b, strict=True)])
