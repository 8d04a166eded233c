"""Endpoint flags and config-file keys become EndpointConfig; `howtobench llm usage` reads the call log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from llm_helpers import req
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.options import cache_mode, judge_endpoint, writer_endpoint
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.llm.accounting import usage_from_log
from howtobench.llm.client import open_client


def test_nothing_configured_means_local() -> None:
    assert writer_endpoint({}) is None and judge_endpoint({"model": "x", "base_url": "http://a/v1"}) is None


def test_flags_override_config_file() -> None:
    config = {"judge_model": "file-judge", "judge_base_url": ["http://a/v1", "http://b/v1/"], "judge_concurrency": 4,
              "judge_reasks": 5, "judge_response_format": "json_object", "model": "file-writer"}
    judge = judge_endpoint(config, model="flag-judge", api_key_env="JUDGE_KEY")
    assert judge == EndpointConfig(model="flag-judge", base_urls=("http://a/v1", "http://b/v1"), concurrency=4,
                                   api_key_env="JUDGE_KEY", reasks=5, response_format="json_object")
    writer = writer_endpoint(config, base_url=["http://w/v1"], rpm=30, timeout=12.5)
    assert writer is not None and writer.model == "file-writer" and writer.rpm == 30 and writer.timeout_s == 12.5


def test_half_configured_endpoint_is_an_error() -> None:
    with pytest.raises(ConfigError, match="--judge-base-url"):
        judge_endpoint({}, model="judge-only")
    with pytest.raises(ConfigError, match="bad"):
        writer_endpoint({"concurrency": 0}, model="m", base_url=["http://x/v1"])


def test_cache_mode_flags() -> None:
    assert [cache_mode(False, False), cache_mode(True, False), cache_mode(False, True)] == ["on", "off", "replay"]
    with pytest.raises(typer.BadParameter):
        cache_mode(True, True)


async def test_usage_per_run_and_purpose(fake_server: FakeServer, endpoint: EndpointConfig, tmp_path: Path) -> None:
    async with open_client(endpoint, workspace=tmp_path, run_id="run-a") as client:
        await client.chat(req("1", purpose="weights"))
        await client.chat(req("2", purpose="leaf:logic"))
        await client.chat(req("3", purpose="leaf:logic"))
        mine = client.usage_by_purpose()
    async with open_client(endpoint, workspace=tmp_path, run_id="run-b") as client:
        await client.chat(req("1", purpose="weights"))
    rows = {(r.run_id, r.purpose): r for r in usage_from_log(tmp_path)}
    assert rows[("run-a", "leaf:logic")].usage == mine["leaf:logic"]
    assert rows[("run-a", "leaf:logic")].usage.calls == 2 and rows[("run-a", "weights")].failed == 0
    assert rows[("run-b", "weights")].usage.cached_calls == 1 and rows[("run-b", "weights")].usage.prompt_tokens == 0

    from howtobench.cli.main import app

    result = CliRunner().invoke(app, ["llm", "usage", "--workspace", str(tmp_path), "--format", "json",
                                      "--run", "run-a"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert {(r["purpose"], r["calls"]) for r in printed} == {("weights", 1), ("leaf:logic", 2)}
