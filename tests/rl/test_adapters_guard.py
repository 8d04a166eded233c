"""The adapters' guard arguments: verl in-process with guard="skip" answers a looped writing without a judge call,
and the guard's signals are in every reward dict (verl collects every key)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from test_adapters import judge, trl_call, verl_function  # noqa: F401  (the fixture)

sys.path.insert(0, str(Path(__file__).parents[1] / "guard"))
from crafted import guide_item_and_writing, repeated_paragraph  # noqa: E402

from fake_server import FakeServer  # noqa: E402
from howtobench.errors import ConfigError  # noqa: E402
from howtobench.guard.guard import adapter_guard  # noqa: E402
from reward_serving import GUIDE, judge_calls, running, settings_for  # noqa: E402


async def test_verl_in_process_guard_skip(judge: FakeServer, tmp_path: Path, bench_root: Path) -> None:  # noqa: F811
    _, writing = guide_item_and_writing(bench_root)
    kwargs = {"judge_base_url": judge.base_url, "judge_model": "fake-judge", "workspace": str(tmp_path / "ws"),
              "data": str(bench_root), "guard": "skip", "guard_reward": "-1"}
    aone = verl_function("compute_score_async", kwargs)
    scores = await asyncio.gather(*(aone(data_source="howtobench", solution_str=text, ground_truth=GUIDE,
                                         extra_info={}) for text in (writing, repeated_paragraph(writing))))
    assert scores[1]["score"] == -1.0 and scores[1]["howtobench/guard/skipped"] == 1.0
    assert scores[0]["howtobench/guard/skipped"] == 0.0 and set(scores[0]) == set(scores[1])
    assert len(judge_calls(judge)) == 1 + 7  # the looped writing cost nothing


async def test_trl_logs_the_guard_signals_means(judge: FakeServer, tmp_path: Path,  # noqa: F811
                                                bench_root: Path) -> None:
    from howtobench.rl.trl import reward_function

    _, writing = guide_item_and_writing(bench_root)
    looped = repeated_paragraph(writing)
    async with running(settings_for(judge, tmp_path / "ws", bench_root)) as app:  # serve's default: flag
        func = reward_function(reward_url=app.url)
        out, logged = await asyncio.get_running_loop().run_in_executor(None, lambda: trl_call(
            func, ["写"] * 2, [writing, looped], label=[GUIDE] * 2))
    assert None not in out
    metrics = logged["metrics"]
    assert metrics["howtobench/guard/skipped"] == 0.0 and metrics["howtobench/guard/flags"] > 0
    assert metrics["howtobench/guard/repeated_paragraph_share"] > 0.45  # the mean of 0 and the loop's 0.9+
    assert logged["extra"]["howtobench/failure"] == ["", ""]


async def test_trl_failure_column_names_a_skip(judge: FakeServer, tmp_path: Path,  # noqa: F811
                                               bench_root: Path) -> None:
    from howtobench.guard.guard import GuardSettings
    from howtobench.rl.trl import reward_function

    _, writing = guide_item_and_writing(bench_root)
    settings = settings_for(judge, tmp_path / "ws", bench_root, guard=GuardSettings(mode="skip"))
    async with running(settings) as app:
        func = reward_function(reward_url=app.url)
        out, logged = await asyncio.get_running_loop().run_in_executor(None, lambda: trl_call(
            func, ["写"], [repeated_paragraph(writing)], label=[GUIDE]))
    assert out == [0.0] and "loop_paragraphs" in logged["extra"]["howtobench/failure"][0]


def test_adapter_guard_arguments() -> None:
    assert adapter_guard({}).mode == "flag"
    settings = adapter_guard({"guard": "skip", "guard_reward": "null", "guard_thresholds": ["stub=0.05"]})
    assert settings.reward is None and settings.thresholds == {"stub": 0.05}
    with pytest.raises(ConfigError, match="--guard is one of"):
        adapter_guard({"guard": "block"})
