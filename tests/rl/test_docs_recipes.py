"""docs/rl.md's recipes run as written where they can without the trainers: the `howtobench serve` command, the
URL OpenRLHF is given, verl's custom_reward_function overrides (loaded the way verl loads `pkg://`), the TRL
reward function, and both data preparations (their labels name real items and their prompts are the items')."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer
from howtobench.data.loader import load_items
from judge_replies import server_handler
from reward_serving import openrlhf_body

pd = pytest.importorskip("pandas", reason="the [rl-test] extra installs pandas (verl's data preparation)")
pytestmark = pytest.mark.trainers


DOC = Path(__file__).parents[2] / "docs" / "rl.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def blocks(title: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section(title), re.DOTALL)


def command(block: str) -> list[str]:
    return shlex.split(block.replace("\\\n", " "))


@pytest.fixture
def served(tmp_path: Path, bench_root: Path) -> Iterator[str]:
    """The server started by the docs' command, only the judge's URL and model, the port and paths swapped."""
    argv = command(blocks("Start the server", "bash")[0])
    assert argv[:2] == ["howtobench", "serve"]
    with FakeServer(server_handler()) as judge:
        swap = {"http://judge-host:8000/v1": judge.base_url, "Qwen/Qwen2.5-72B-Instruct": "fake-judge",
                "5000": "0", "/data/reward-ws": str(tmp_path / "ws")}
        args = [swap.get(a, a) for a in argv[2:]] + ["--data", str(bench_root)]
        proc = subprocess.Popen([sys.executable, "-m", "howtobench", "serve", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            _wait_healthy(url)
            yield url
        finally:
            proc.terminate()
            proc.wait(30)
            assert proc.stdout is not None
            proc.stdout.close()


def _wait_healthy(url: str) -> None:
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server never became healthy")


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as resp:
        return dict(json.loads(resp.read()))


def test_openrlhf_verl_and_trl_recipes_against_the_documented_server(served: str) -> None:
    openrlhf = command(blocks("OpenRLHF", "bash")[0])
    remote = openrlhf[openrlhf.index("--reward.remote_url") + 1]
    assert remote == "http://reward-host:5000/get_reward"
    answer = post(remote.replace("http://reward-host:5000", served),
                  openrlhf_body("<|im_start|>user\n写<|im_end|>\n", ["# 题\n\n正文。"], "guide/infer_354"))
    assert answer["rewards"][0] is not None and answer["failures"] == [None]

    overrides = dict(a.split("=", 1) for a in command(blocks("verl", "bash")[0]) if "=" in a)
    path, name = overrides["reward.custom_reward_function.path"], overrides["reward.custom_reward_function.name"]
    prefix = "+reward.custom_reward_function.reward_kwargs."
    kwargs = {k.removeprefix(prefix): v.replace("http://reward-host:5000", served)
              for k, v in overrides.items() if k.startswith(prefix)}
    assert path.startswith("pkg://") and kwargs == {"reward_url": served}
    raw_fn = getattr(importlib.import_module(path.removeprefix("pkg://").replace("/", ".")), name)

    async def reward_loop() -> dict[str, float]:  # verl's _call_with_kwargs_async, awaited by its reward loop
        return dict(await raw_fn(data_source="howtobench", solution_str="# 题\n\n正文。",
                                 ground_truth="guide/infer_354", extra_info={}, **kwargs))

    verl_reward = asyncio.run(reward_loop())
    assert verl_reward["score"] == pytest.approx(answer["rewards"][0])

    scope: dict[str, Any] = {}
    exec(blocks("TRL", "python")[0].replace("http://reward-host:5000", served), scope)  # noqa: S102
    trl_reward = asyncio.run(scope["tow"](prompts=["写"], completions=["# 题\n\n正文。"], completion_ids=[[1]],
                                          label=["guide/infer_354"]))
    assert trl_reward == pytest.approx(answer["rewards"])


def test_the_data_preparations_write_labels_of_real_items(tmp_path: Path, bench_root: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    items = {f"{i.task}/{i.id}": i for i in load_items(bench_root)}
    jsonl = blocks("Data preparation: labels from the benchmark", "python")[0]
    exec(jsonl.replace("/data/howtobench-data", str(bench_root)), {})  # noqa: S102
    rows = [json.loads(line) for line in (tmp_path / "howtobench_train.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 456 + 467 and all(items[r["label"]].task_prompt == r["prompt"] for r in rows)
    parquet = next(b for b in blocks("verl", "python") if "to_parquet" in b)
    exec(parquet.replace("/data/howtobench-data", str(bench_root)), {})  # noqa: S102
    frame = pd.read_parquet(tmp_path / "howtobench_train.parquet")
    labels = [r["ground_truth"] for r in frame["reward_model"]]
    assert len(labels) == 456 + 467 and all(items[g].task in ("guide", "open") for g in labels)
    assert frame["prompt"][0][0]["content"] == items[labels[0]].task_prompt
