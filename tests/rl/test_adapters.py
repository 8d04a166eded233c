"""The verl and TRL adapters called exactly as verl's and TRL's code call a reward (neither is installed): over a
running server and in-process, the same rewards as a direct judge-layer call, failures as their trainer needs."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer, Reply
from howtobench.data.loader import load_items
from howtobench.data.models import Writing
from howtobench.judges.runner import judge_or_fail
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.client import open_client
from howtobench.rl.verl import NoReward
from judge_replies import server_handler
from reward_serving import GUIDE, endpoint_of, judge_calls, running, settings_for

RESPONSES = [f"# 标题\n\n第{k}篇，{'词' * (15 + 5 * k)}。\n\n## 小节\n\n完。" for k in range(3)]


def verl_function(name: str, reward_kwargs: dict[str, Any]) -> Any:
    """What verl's `get_custom_reward_fn` builds from `custom_reward_function.path=pkg://howtobench.rl.verl`."""
    raw_fn = getattr(importlib.import_module("howtobench.rl.verl"), name)  # verl's load_module for "pkg://"

    def call(*args: Any, **kwargs: Any) -> Any:  # verl's _call_with_kwargs
        return raw_fn(*args, **{**kwargs, **reward_kwargs})

    async def acall(*args: Any, **kwargs: Any) -> Any:  # verl's _call_with_kwargs_async
        return await raw_fn(*args, **{**kwargs, **reward_kwargs})

    return partial(acall) if inspect.iscoroutinefunction(raw_fn) else partial(call)


async def direct(server: FakeServer, workspace: Path, data: Path) -> list[float]:
    item = next(i for i in load_items(data, ["guide"]) if i.id == "infer_354")
    async with open_client(endpoint_of(server), workspace=workspace) as client:
        judge = TreeOfWriting(client)
        judged = [await judge_or_fail(judge, item, Writing(infer_id=item.id, model="policy", output=r))
                  for r in RESPONSES]
    return [j.score for j in judged if j.score is not None]


@pytest.fixture
def judge() -> Iterator[FakeServer]:
    with FakeServer(server_handler()) as server:
        yield server


async def test_verl_single_and_async_over_the_server(judge: FakeServer, tmp_path: Path,
                                                           bench_root: Path) -> None:
    expected = await direct(judge, tmp_path / "direct", bench_root)
    judge.reset()
    async with running(settings_for(judge, tmp_path / "ws", bench_root)) as app:
        kwargs = {"reward_url": app.url}
        single = verl_function("compute_score", kwargs)
        assert not inspect.iscoroutinefunction(single)
        loop = asyncio.get_running_loop()
        first = await loop.run_in_executor(None, lambda: single(  # as verl's naive manager runs it
            data_source="howtobench", solution_str=RESPONSES[0], ground_truth=GUIDE, extra_info={"index": 0}))
        aone = verl_function("compute_score_async", kwargs)
        assert inspect.iscoroutinefunction(aone)  # verl's reward loop then awaits it
        rest = await asyncio.gather(*(aone(data_source="howtobench", solution_str=r, ground_truth=GUIDE,
                                           extra_info={}) for r in RESPONSES[1:]))
        again = await asyncio.gather(*(aone(data_source="howtobench", solution_str=r, ground_truth=GUIDE,
                                            extra_info={}) for r in RESPONSES))
    assert [first["score"], *(r["score"] for r in rest)] == pytest.approx(expected)
    assert [b["score"] for b in again] == pytest.approx(expected)
    assert set(first) == set(again[2]) and first["howtobench/root"] == first["score"]
    assert first["howtobench/failed"] == 0.0 and "howtobench/logic" in first
    assert len(judge_calls(judge)) == 1 + 7 * 3  # the second round was answered from the cache


async def test_verl_in_process_and_a_failure_it_cannot_train_on(judge: FakeServer, tmp_path: Path,
                                                                bench_root: Path) -> None:
    expected = await direct(judge, tmp_path / "direct", bench_root)
    kwargs = {"judge_base_url": judge.base_url, "judge_model": "fake-judge", "judge_concurrency": 16,
              "workspace": str(tmp_path / "inproc"), "data": str(bench_root)}
    group = verl_function("compute_score_async", kwargs)
    scores = await asyncio.gather(*(group(data_source="howtobench", solution_str=r, ground_truth=GUIDE,
                                          extra_info={}) for r in RESPONSES))
    assert [s["score"] for s in scores] == pytest.approx(expected)
    judge.handler = lambda request: Reply.text("nonsense") if request.get("response_format") else Reply.text("x")
    aone = verl_function("compute_score_async", {**kwargs, "workspace": str(tmp_path / "other")})
    alone = await aone(data_source="x", solution_str="正文", ground_truth={"instruction": "写"}, extra_info=None)
    assert alone["score"] == 0.0 and alone["howtobench/substituted"] == 1.0  # all-failed group: the constant
    anull = verl_function("compute_score_async", {**kwargs, "workspace": str(tmp_path / "fourth"),
                                                  "failed_reward": "none"})
    with pytest.raises(NoReward, match="verl cannot train on a missing reward"):
        await anull(data_source="x", solution_str="正文", ground_truth={"instruction": "写"}, extra_info=None)
    subst = verl_function("compute_score", {**kwargs, "workspace": str(tmp_path / "third"), "failed_reward": 0.5})
    got = [await asyncio.get_running_loop().run_in_executor(None, lambda: subst(
        data_source="x", solution_str="正文", ground_truth={"instruction": "写"}, extra_info=None))]
    assert got[0]["score"] == 0.5 and got[0]["howtobench/substituted"] == 1.0
    assert got[0]["howtobench/root"] == 0.0 and got[0]["howtobench/present/root"] == 0.0


def trl_call(func: Any, prompts: list[Any], completions: list[Any], **columns: Any) -> tuple[list[Any], dict]:
    """As TRL's `_calculate_rewards` awaits an async reward function, on its own daemon loop."""
    logged: dict[str, Any] = {"metrics": {}, "extra": {}}
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        kwargs = {**columns, "trainer_state": object(),
                  "log_extra": lambda column, values: logged["extra"].setdefault(column, []).extend(values),
                  "log_metric": lambda name, value: logged["metrics"].__setitem__(name, value)}
        assert inspect.iscoroutinefunction(func)
        out = asyncio.run_coroutine_threadsafe(func(prompts=prompts, completions=completions,
                                                    completion_ids=[[1, 2]] * len(completions), **kwargs),
                                               loop).result()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    return out, logged


async def test_trl_reward_function_with_conversational_completions(judge: FakeServer, tmp_path: Path,
                                                                    bench_root: Path) -> None:
    from howtobench.rl.trl import reward_function

    expected = await direct(judge, tmp_path / "direct", bench_root)
    async with running(settings_for(judge, tmp_path / "ws", bench_root)) as app:
        func = reward_function(reward_url=app.url)
        prompts = [[{"role": "user", "content": "写"}]] * 3
        completions = [[{"role": "assistant", "content": r}] for r in RESPONSES]
        out, logged = await asyncio.get_running_loop().run_in_executor(None, lambda: trl_call(
            func, prompts, completions, label=[GUIDE] * 3, other_column=[1, 2, 3]))
        judge.handler = lambda request: Reply.text("nonsense") if request.get("response_format") else Reply.text("x")
        failed, _ = await asyncio.get_running_loop().run_in_executor(None, lambda: trl_call(
            func, ["写一首诗"], ["一首新诗"]))
    assert out == pytest.approx(expected) and func.__name__ == "howtobench_tow"
    assert logged["metrics"]["howtobench/root"] == pytest.approx(sum(expected) / 3)
    assert logged["extra"]["howtobench/failure"] == ["", "", ""]
    assert failed == [None]  # TRL leaves it out of its group's baseline; never a made-up number


def test_a_misspelt_argument_is_an_error_with_did_you_mean() -> None:
    from howtobench.errors import ConfigError
    from howtobench.rl.trl import reward_function
    from howtobench.rl.verl import compute_score

    with pytest.raises(ConfigError, match="did you mean 'reward_url'"):
        reward_function(reward_ulr="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="did you mean 'judge_model'"):
        compute_score("x", "text", "guide/infer_354", None, judge_modle="m")


def test_every_bad_argument_is_named_at_once() -> None:
    from howtobench.errors import ConfigError
    from howtobench.rl.verl import compute_score

    with pytest.raises(ConfigError) as raised:
        compute_score("x", "text", "guide/infer_354", None, judge_modle="m", judge_concurrency=0,
                      failed_reward="mean", reward_router_address=None)
    message = str(raised.value)
    assert "did you mean 'judge_model'" in message and "judge_concurrency" in message
    assert "failed_reward" in message and message.count("\n") == 0


def test_the_adapters_take_every_endpoint_setting_serve_takes(tmp_path: Path) -> None:
    """The same names as serve's --judge-* flags (cli/options.py lists them for every command), and each reaches the
    in-process judge's endpoint; a provider profile gives its defaults under the settings given."""
    from howtobench.cli.options import _ENDPOINT_FLAGS
    from howtobench.rl.arguments import RewardArguments

    assert {f"judge_{name}" for name in _ENDPOINT_FLAGS} <= set(RewardArguments.model_fields)
    given = {"judge_base_url": ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"], "judge_model": "m",
             "judge_api_key_env": "JUDGE_KEY", "judge_concurrency": 3, "judge_rpm": 60, "judge_timeout": 9.0,
             "judge_max_retries": 1, "judge_reasks": 0, "judge_response_format": "json_object",
             "judge_use_max_completion_tokens": True, "judge_json_object_schema": True, "judge_max_tokens": 512,
             "workspace": str(tmp_path), "max_pending": 7, "group_size": 8, "failed_reward": "none"}
    settings = RewardArguments.of(given).settings()
    endpoint = settings.endpoint
    assert endpoint is not None and endpoint.base_urls == ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    assert (endpoint.api_key_env, endpoint.concurrency, endpoint.rpm, endpoint.timeout_s) == ("JUDGE_KEY", 3, 60, 9.0)
    assert (endpoint.max_retries, endpoint.reasks, endpoint.response_format) == (1, 0, "json_object")
    assert endpoint.use_max_completion_tokens and endpoint.json_object_schema
    assert settings.options["max_tokens"] == 512 and settings.max_queued == 7 and settings.group_size == 8
    assert settings.failed_reward is None
    profile = RewardArguments.of({"judge_provider": "deepseek", "judge_model": "deepseek-chat",
                                  "judge_reasks": 1}).settings().endpoint
    assert profile is not None and profile.base_urls == ("https://api.deepseek.com/v1",)
    assert (profile.response_format, profile.api_key_env, profile.reasks) == ("json_object", "DEEPSEEK_API_KEY", 1)
