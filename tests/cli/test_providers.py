"""Named provider profiles (`--provider` / `--judge-provider`, `provider:` in a config section): a profile's settings
reach the request body, an explicit flag or config key wins over it, an unknown name is one line with a
did-you-mean, and what a run records is the resolved endpoint (its key variable, never a key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fake_server import FakeServer, default_handler
from howtobench.cli.config_file import flatten
from howtobench.cli.main import app
from howtobench.cli.options import endpoint_from_flags
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.run_settings import endpoint_config


def judged_body(server: FakeServer, bench_root: Path, tmp_path: Path, *flags: str) -> dict[str, Any]:
    """The body of the one judge call `judge --method single` sends for one writing with these judge flags."""
    server.handler = default_handler
    result = CliRunner().invoke(app, [
        "judge", "--method", "single", "--data", str(bench_root), "--task", "guide", "--limit", "1", "--models",
        "deepseek-r1", "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / f"{len(server.requests)}.jsonl"),
        "--no-progress", "--no-preflight", "--judge-reasks", "0", "--judge-base-url", server.base_url, *flags])
    assert result.exit_code in (0, 3), (result.output, result.exception)  # 3: the fake's reply is no judgment
    return server.requests[-1]


def test_deepseek_asks_json_object_with_the_schema_in_the_prompt_and_a_flag_wins(
        fake_server: FakeServer, bench_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")  # the profile's key variable
    body = judged_body(fake_server, bench_root, tmp_path, "--judge-provider", "deepseek",
                       "--judge-model", "deepseek-chat")
    assert body["model"] == "deepseek-chat" and body["response_format"] == {"type": "json_object"}
    told = "Reply with a single JSON object that satisfies this JSON schema"  # structured.schema_instruction
    assert told in body["messages"][-1]["content"]  # the schema the server will not enforce, told in the prompt
    body = judged_body(fake_server, bench_root, tmp_path, "--judge-provider", "deepseek",
                       "--judge-model", "deepseek-chat", "--judge-response-format", "json_schema")
    assert body["response_format"]["type"] == "json_schema"  # the explicit flag over the profile
    assert told not in body["messages"][-1]["content"]  # the server enforces it: nothing told


def test_openai_o_series_sends_max_completion_tokens(fake_server: FakeServer, bench_root: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    body = judged_body(fake_server, bench_root, tmp_path, "--judge-provider", "openai", "--judge-model", "o3-mini")
    assert "max_completion_tokens" in body and "max_tokens" not in body
    body = judged_body(fake_server, bench_root, tmp_path, "--judge-provider", "openai", "--judge-model", "gpt-4o")
    assert "max_tokens" in body and "max_completion_tokens" not in body
    assert body["response_format"]["type"] == "json_schema"


def test_profiles_give_their_servers_defaults_under_every_given_setting() -> None:
    vllm = endpoint_from_flags("judge_", {"provider": "vllm", "model": "Qwen/Qwen2.5-7B-Instruct"}, {})
    assert vllm == EndpointConfig(model="Qwen/Qwen2.5-7B-Instruct", base_urls=("http://localhost:8000/v1",))
    assert vllm.concurrency is None and vllm.concurrency_text == "auto"  # a GPU server's batch: found while running
    mine = endpoint_from_flags("", {"provider": "vllm", "model": "m", "concurrency": 8,
                                    "base_url": ["http://gpu:9000/v1"]}, {})
    assert mine is not None and mine.concurrency == 8 and mine.base_urls == ("http://gpu:9000/v1",)
    python_server = endpoint_from_flags("", {"provider": "llama-cpp-python", "model": "local"}, {})
    assert python_server == EndpointConfig(model="local", base_urls=("http://localhost:8000/v1",), concurrency=1,
                                           response_format="json_object", json_object_schema=True)
    expected = {"sglang": ("http://localhost:30000/v1", None), "ollama": ("http://localhost:11434/v1", 4),
                "llama-cpp": ("http://localhost:8080/v1", 4)}
    for name, (url, slots) in expected.items():
        found = endpoint_from_flags("", {"provider": name, "model": "m"}, {})
        assert found is not None and (found.base_urls, found.concurrency) == ((url,), slots), name
    with pytest.raises(ConfigError, match="--judge-provider deepseek needs --judge-model"):
        endpoint_from_flags("judge_", {"provider": "deepseek"}, {})


def test_a_config_section_names_a_provider_and_the_run_records_the_resolved_endpoint(tmp_path: Path) -> None:
    config = flatten({"judge": {"provider": "deepseek", "model": "deepseek-reasoner", "timeout": 600}}, "c.yaml")
    judge = endpoint_from_flags("judge_", {}, config)
    assert judge == EndpointConfig(model="deepseek-reasoner", base_urls=("https://api.deepseek.com/v1",),
                                   api_key_env="DEEPSEEK_API_KEY", response_format="json_object", timeout_s=600)
    section = endpoint_config(judge)  # what config.yaml and the manifest hold: the resolved settings, no key
    assert section["base_url"] == ["https://api.deepseek.com/v1"] and section["api_key_env"] == "DEEPSEEK_API_KEY"
    assert "provider" not in section and "api_key" not in section
    assert endpoint_from_flags("judge_", {}, flatten({"judge": section}, "config.yaml")) == judge  # it repeats


def test_an_unknown_provider_is_one_line_with_did_you_mean(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["judge", "--method", "single", "--judge-provider", "deepseak",
                                      "--judge-model", "x", "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "unknown provider 'deepseak' (did you mean 'deepseek'?)" in lines[0], result.output
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"judge": {"provider": "vlm", "model": "m"}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["judge", "--method", "single", "--config", str(config),
                                      "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "unknown provider 'vlm' (did you mean 'vllm'?)" in result.output
