"""On Ray, as verl runs its reward workers: the verl adapter called from several Ray workers at once, against one
`howtobench serve` and in-process on one shared workspace, gives exactly the rewards of a direct judge-layer call,
and no judge call is made twice. (Ray comes from the `rl-test` extra; scripts/setup-env installs it.)"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer
from howtobench.data.loader import load_items
from howtobench.data.models import Writing
from howtobench.judges.runner import judge_or_fail
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.client import open_client
from judge_replies import server_handler
from reward_serving import ServeProcess, endpoint_of, judge_calls, serve_args

ray = pytest.importorskip("ray", reason="the [rl-test] extra installs ray")
pytestmark = [pytest.mark.ray, pytest.mark.trainers]


ITEMS = ["infer_354", "infer_355", "infer_356"]
N = 4  # rollouts per group
WORKERS = 4


def rollouts(item: str) -> list[str]:
    return [f"# {item}\n\n第{k}个回答，{'句' * (12 + 9 * k)}。\n\n## 尾\n\n完。" for k in range(N)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    env = {k: os.environ[k] for k in ("PYTHONPATH", "HOWTOBENCH_DATA") if k in os.environ}
    ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        yield
    finally:
        ray.shutdown()


@ray.remote
def reward_loop_worker(samples: list[tuple[str, str]], reward_kwargs: dict[str, Any]) -> list[float]:
    """One of verl's reward-loop workers: an event loop awaiting compute_score_async per sample, at once."""
    from howtobench.rl.verl import compute_score_async

    async def run() -> list[dict[str, float]]:
        return list(await asyncio.gather(*(compute_score_async(
            data_source="howtobench", solution_str=text, ground_truth=label, extra_info={}, **reward_kwargs)
            for label, text in samples)))

    return [r["score"] for r in asyncio.run(run())]


def every_sample() -> list[tuple[str, str]]:
    return [(f"guide/{item}", text) for item in ITEMS for text in rollouts(item)]


async def direct(server: FakeServer, workspace: Path, data: Path) -> dict[tuple[str, str], float]:
    items = {i.id: i for i in load_items(data, ["guide"])}
    async with open_client(endpoint_of(server), workspace=workspace) as client:
        judge = TreeOfWriting(client)
        out = {}
        for label, text in every_sample():
            item = items[label.split("/")[1]]
            judged = await judge_or_fail(judge, item, Writing(infer_id=item.id, model="policy", output=text))
            assert judged.score is not None
            out[(label, text)] = judged.score
        return out


def no_call_twice(server: FakeServer) -> None:
    bodies = Counter(json.dumps(r["messages"], ensure_ascii=False, sort_keys=True) for r in judge_calls(server))
    assert [body for body, count in bodies.items() if count > 1] == []


def test_ray_workers_against_one_server(cluster: None, tmp_path: Path, bench_root: Path) -> None:
    samples = every_sample()
    with FakeServer(server_handler(), latency=0.02) as judge:
        expected = asyncio.run(direct(judge, tmp_path / "direct", bench_root))
        judge.reset()
        with ServeProcess(serve_args(judge.base_url, tmp_path / "ws", "--data", str(bench_root))) as served:
            # each worker holds rollouts of every group, as verl spreads a batch over its workers
            shares = [samples[k::WORKERS] for k in range(WORKERS)]
            got = ray.get([reward_loop_worker.remote(share, {"reward_url": served.url}) for share in shares])
            calls = len(judge_calls(judge))
            no_call_twice(judge)
    for share, rewards in zip(shares, got, strict=True):
        assert rewards == pytest.approx([expected[s] for s in share])
    assert calls == len(ITEMS) * (1 + 7 * N)


def test_ray_workers_in_process_on_one_shared_workspace(cluster: None, tmp_path: Path, bench_root: Path) -> None:
    samples = every_sample()
    with FakeServer(server_handler(), latency=0.02) as judge:
        expected = asyncio.run(direct(judge, tmp_path / "direct", bench_root))
        judge.reset()
        kwargs = {"judge_base_url": judge.base_url, "judge_model": "fake-judge", "judge_concurrency": 16,
                  "workspace": str(tmp_path / "shared-ws"), "data": str(bench_root)}
        groups = [samples[g * N:(g + 1) * N] for g in range(len(ITEMS))]  # a group stays in one process
        first = ray.get([reward_loop_worker.remote(group, kwargs) for group in groups])
        assert len(judge_calls(judge)) == len(ITEMS) * (1 + 7 * N)
        judge.reset()
        shares = [samples[k::WORKERS] for k in range(WORKERS)]  # then every worker re-scores rollouts of all
        again = ray.get([reward_loop_worker.remote(share, kwargs) for share in shares])
        assert judge_calls(judge) == []  # answered from the shared workspace's cache
    for group, rewards in zip(groups, first, strict=True):
        assert rewards == pytest.approx([expected[s] for s in group])
    for share, rewards in zip(shares, again, strict=True):
        assert rewards == pytest.approx([expected[s] for s in share])
