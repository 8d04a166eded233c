"""examples/ray_data_judge.py's Ray Data pipeline, with an HTTP stand-in for the vLLM processor: a ToW batch file
read by Ray Data, each row as vLLM's processor receives it answered by the fake server, written back in the batch
output format — and imported by howtobench into complete judgments equal to live ones."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.steps.batch_files import FILE_BASE_URL, BatchFiles, RoundExported
from howtobench.steps.judge import JudgeJob, judge_job
from howtobench.steps.settings import Execution, Selection
from judge_replies import server_handler

ray = pytest.importorskip("ray", reason="the [rl-test] extra installs ray[data]")
pytestmark = pytest.mark.ray
ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import ray_data_judge  # noqa: E402

MODEL = "Qwen/Qwen3-8B"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    # the workers import what the driver pickled by reference: the example, this test module and its helpers
    paths = [ROOT / "examples", ROOT / "tests", Path(__file__).parent, ROOT / "src"]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": ":".join(str(p) for p in paths)}})
    yield
    ray.shutdown()


class HttpEngine:
    """Stands in for vLLM's processor: takes the row vLLM would (messages, sampling_params), asks an
    OpenAI-compatible server, and gives back the columns vLLM's processor adds."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        sampling = dict(row["sampling_params"])
        body: dict[str, Any] = {"model": row["model"], "messages": list(row["messages"]),
                                "temperature": sampling["temperature"], "max_tokens": sampling["max_tokens"]}
        if sampling.get("structured_outputs"):
            schema = json.loads(sampling["structured_outputs"]["json"])
            body["response_format"] = {"type": "json_schema",
                                    "json_schema": {"name": row["schema_name"], "schema": schema}}
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
        return {**row, "generated_text": answer["choices"][0]["message"]["content"],
                "num_input_tokens": answer["usage"]["prompt_tokens"],
                "num_generated_tokens": answer["usage"]["completion_tokens"]}


def stand_in(url: str) -> ray_data_judge.Processor:
    """The example's pipeline with the HTTP engine where Ray Data's vLLM processor would be."""
    return lambda ds: ds.map(ray_data_judge.engine_row).map(HttpEngine(url)).map(ray_data_judge.batch_output_row)


def job(bench_root: Path, tmp_path: Path, files: BatchFiles | None, base_url: str = FILE_BASE_URL,
        ws: str = "ws", out: str = "tow.jsonl") -> JudgeJob:
    return JudgeJob(Selection(data_dir=bench_root, tasks=("guide",), limit=2, models=("deepseek-chat",)),
                    Execution(workspace=tmp_path / ws, progress=False, files=files), tmp_path / out,
                    endpoint=EndpointConfig(model=MODEL, base_urls=(base_url,)))


async def test_a_ray_data_pipeline_answers_an_exported_file(ray_cluster: None, bench_root: Path,
                                                            tmp_path: Path) -> None:
    calls, answers = tmp_path / "calls.jsonl", tmp_path / "answers.jsonl"
    with pytest.raises(RoundExported):
        await judge_job(job(bench_root, tmp_path, BatchFiles(export=calls)))
    with FakeServer(server_handler()) as server:
        count = ray_data_judge.answer_file(calls, answers, stand_in(server.base_url + "/chat/completions"))
        assert count == 16 and len(server.requests) == 16
        live = await judge_job(job(bench_root, tmp_path, None, server.base_url, ws="live", out="live.jsonl"))
    lines = [json.loads(t) for t in answers.read_text().splitlines()]
    assert {x["custom_id"] for x in lines} == {json.loads(t)["custom_id"] for t in calls.read_text().splitlines()}
    assert all(x["response"]["status_code"] == 200 and x["response"]["body"]["model"] == MODEL for x in lines)
    judged = await judge_job(job(bench_root, tmp_path, BatchFiles(imports=(answers,))))
    assert [(j.item_id, j.status, j.score, j.nodes) for j in judged] == [
        (j.item_id, j.status, j.score, j.nodes) for j in live]
