"""The cache-aware cost model: provider cache rules, prefix replay, the four pricing modes, reply ceilings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, Reply, script
from howtobench.config import EndpointConfig
from howtobench.errors import ConfigError
from howtobench.llm.accounting import Price, estimate_tokens, load_prices, price_for
from howtobench.llm.client import open_client
from howtobench.llm.dryrun import price_plan, render
from howtobench.llm.pricing import (
    CACHE_RULES,
    MODES,
    CallTokens,
    PrefixCache,
    call_tokens,
    completion_budget,
    logged_mode_costs,
    mode_costs,
    modes_from_log,
    prompt_text,
    reply_ceiling,
)
from howtobench.llm.types import ChatRequest, SamplingParams, Usage

GPT4O = Price(input=2.5, cached_input=1.25, output=10, prompt_cache="openai", batch=0.5)


@pytest.mark.parametrize(("rule", "shared", "cached"), [
    ("openai", 1023, 0), ("openai", 1024, 1024), ("openai", 1151, 1024), ("openai", 1152, 1152),
    ("openai", 5000, 4992), ("deepseek", 63, 0), ("deepseek", 64, 64), ("deepseek", 130, 128),
])
def test_provider_cache_rules(rule: str, shared: int, cached: int) -> None:
    found = CACHE_RULES[rule]
    assert found is not None and found.cached(shared) == cached


def test_prefix_cache_finds_the_longest_prefix_shared_with_any_earlier_prompt() -> None:
    cache = PrefixCache()
    assert cache.admit("abcdef") == 0
    assert cache.admit("xyz") == 0
    assert cache.admit("abcxyz") == 3
    assert cache.admit("abcdeQ") == 5  # "abcdef", not the more recent "abcxyz"
    assert cache.admit("abcdef") == 6


def req(system: str, user: str, max_tokens: int = 100) -> ChatRequest:
    return ChatRequest(messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
                       sampling=SamplingParams(max_tokens=max_tokens))


def test_calls_replayed_in_order_cache_their_shared_prefix() -> None:
    shared = "文" * 3000  # 2,000 tokens of Chinese
    first, second = req("评审", shared + "甲项标准"), req("评审", shared + "乙项标准很长")
    calls = call_tokens([first, second], [50, 60])
    system = estimate_tokens("评审") + 4
    assert calls[0] == CallTokens(prompt=system + estimate_tokens(shared + "甲项标准") + 4, completion=50,
                                  cached={"openai": 0, "deepseek": 0, "none": 0})
    common = system + estimate_tokens(shared)  # the prompts part right after the shared text: 2,005 tokens
    assert common == 2005 and calls[1].cached == {"openai": 1920, "deepseek": 1984, "none": 0}
    assert prompt_text(first.messages).startswith("\x00system\x01评审\x00user\x01")


def test_the_four_modes_by_hand() -> None:
    calls = [CallTokens(prompt=3000, completion=200, cached={"openai": 0}),
             CallTokens(prompt=3000, completion=200, cached={"openai": 2560})]
    costs = mode_costs(GPT4O, calls)
    listed = (6000 * 2.5 + 400 * 10) / 1e6
    cached = ((6000 - 2560) * 2.5 + 2560 * 1.25 + 400 * 10) / 1e6
    assert costs["list"] == pytest.approx(listed) and costs["cached"] == pytest.approx(cached)
    assert costs["batch"] == pytest.approx(listed / 2) and costs["batch+cached"] == pytest.approx(cached / 2)
    deepseek = Price(input=0.28, cached_input=0.028, output=0.42, prompt_cache="deepseek")
    assert mode_costs(deepseek, [CallTokens(1000, 10, {"deepseek": 960})])["batch"] is None
    assert logged_mode_costs(GPT4O, Usage(prompt_tokens=3000, completion_tokens=200, cached_tokens=2560))[
        "batch+cached"] == pytest.approx(((440 * 2.5 + 2560 * 1.25) + 2000) / 2e6)


def test_batch_price_needs_a_batch_rate() -> None:
    with pytest.raises(ConfigError, match="no batch price"):
        Price(input=1, output=1).cost(10, 10, batch=True)
    table = load_prices()
    assert (price_for("gpt-4o-2024-11-20", table) or GPT4O).batch == 0.5
    assert (price_for("deepseek-chat", table) or GPT4O).prompt_cache == "deepseek"


def test_reply_ceiling_bounds_a_valid_reply() -> None:
    leaf = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 400},
                                             "score": {"type": "integer", "enum": list(range(1, 11))}}}
    reason, score = math.ceil(400 / 1.5) + 2, estimate_tokens("10") + 1
    assert reply_ceiling(leaf) == 2 + estimate_tokens("reason") + estimate_tokens("score") + reason + score + 8
    assert reply_ceiling({"type": "string"}) is None  # no maxLength: no bound
    typical = 2 + estimate_tokens("reason") + estimate_tokens("score") + math.ceil(80 / 1.5) + 2 + score + 8
    assert reply_ceiling(leaf, text_chars=80) == typical and reply_ceiling(leaf, text_chars=900) == reply_ceiling(leaf)
    assert reply_ceiling({"type": "array", "items": {"type": "integer"}, "maxItems": 3}) == 2 + 3 * 9
    request = ChatRequest(messages=({"role": "user", "content": "x"},), sampling=SamplingParams(max_tokens=512),
                          response_schema=leaf)
    assert completion_budget(request, ceiling=False) == 512
    assert completion_budget(request, ceiling=True) == reply_ceiling(leaf)


def test_dry_run_prices_every_mode() -> None:
    shared = "文" * 3000
    requests = [req("评审", shared + "甲"), req("评审", shared + "乙")]
    plan = price_plan("judge", "gpt-4o", requests)
    assert plan.modes == mode_costs(price_for("gpt-4o", load_prices()) or GPT4O, call_tokens(requests, [100, 100]))
    assert plan.modes["batch+cached"] is not None and plan.modes["batch+cached"] < plan.modes["cached"]  # type: ignore
    assert "by pricing mode: list ~$" in render([plan])
    assert price_plan("judge", "deepseek-chat", requests).modes["batch"] is None


async def test_usage_from_the_log_in_every_mode(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = script(
        Reply.text("a", usage={"prompt_tokens": 3000, "completion_tokens": 200}),
        Reply.text("b", usage={"prompt_tokens": 3000, "completion_tokens": 200,
                               "prompt_tokens_details": {"cached_tokens": 2560}}))
    endpoint = EndpointConfig(model="gpt-4o-2024-11-20", base_urls=(fake_server.base_url,))
    async with open_client(endpoint, workspace=tmp_path, run_id="r1") as client:
        await client.chat(ChatRequest(messages=({"role": "user", "content": "1"},), purpose="leaf:logic"))
        await client.chat(ChatRequest(messages=({"role": "user", "content": "2"},), purpose="leaf:logic"))
    modes = modes_from_log(tmp_path)[("r1", "leaf:logic")]
    assert modes == pytest.approx(mode_costs(GPT4O, [CallTokens(6000, 400, {"openai": 2560})]))
    assert modes["cached"] == pytest.approx(((3440 * 2.5) + 2560 * 1.25 + 4000) / 1e6)

    from howtobench.cli.main import app

    shown = CliRunner().invoke(app, ["llm", "usage", "--workspace", str(tmp_path), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    [row] = json.loads(shown.output)
    assert row["cost_by_mode"]["batch"] == pytest.approx((6000 * 2.5 + 4000) / 2e6)
    table = CliRunner().invoke(app, ["llm", "usage", "--workspace", str(tmp_path)])
    assert "batch+cached" in table.output and f"{modes['batch+cached']:.4f}" in table.output


async def test_a_model_without_a_price_costs_unknown_in_every_mode_not_zero(fake_server: FakeServer,
                                                                           tmp_path: Path) -> None:
    fake_server.handler = script(Reply.text("a", usage={"prompt_tokens": 3000, "completion_tokens": 200}))
    endpoint = EndpointConfig(model="my-unpriced-model", base_urls=(fake_server.base_url,))
    async with open_client(endpoint, workspace=tmp_path, run_id="r1") as client:
        await client.chat(ChatRequest(messages=({"role": "user", "content": "1"},), purpose="leaf:logic"))
    assert modes_from_log(tmp_path)[("r1", "leaf:logic")] == dict.fromkeys(MODES, None)

    from howtobench.cli.main import app

    shown = CliRunner().invoke(app, ["llm", "usage", "--workspace", str(tmp_path), "--format", "json"])
    [row] = json.loads(shown.output)
    assert row["cost_by_mode"] == dict.fromkeys(MODES, None) and row["unpriced_calls"] == 1


def test_a_bad_user_price_table_is_one_line_naming_the_model_and_field(tmp_path: Path) -> None:
    """It printed pydantic's multi-line dump (with a link to pydantic's docs) for a price missing `output`."""
    table = tmp_path / "prices.yaml"
    table.write_text("my-model: {input: 0.5, output: 1.5}\nother: {input: 0.5}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_prices(table)
    said = str(info.value)
    assert "\n" not in said and "pydantic" not in said
    assert said.startswith(f"bad price table {table}: other: output: Field required")
    table.write_text("my-model: {input: 0.5, output: 1.5}\n", encoding="utf-8")
    assert price_for("my-model", load_prices(table)) == Price(input=0.5, output=1.5)
    table.write_text("my-model: {input: 0.5\n", encoding="utf-8")  # YAML that does not parse: file:line:column
    with pytest.raises(ConfigError, match=r"^bad price table .*prices.yaml:2:1: expected ',' or '}'"):
        load_prices(table)
    table.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected one line per model"):
        load_prices(table)
