"""A model's price is looked up once where its client is built and travels with it (`accounting.ModelPrice`):
the batch client's bound and the client it opens share one lookup; a client given the price reads no table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fake_batch_server import FakeBatchServer
from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.llm import accounting
from howtobench.llm.accounting import ModelPrice, Price, load_prices, price_for
from howtobench.llm.batch import BatchSettings
from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest
from howtobench.steps.client import batch_client
from judge_replies import server_handler

MODEL = "gpt-4o-2024-11-20"  # in the built-in table, with a batch rate
REQUEST = ChatRequest(messages=({"role": "user", "content": "写一首诗"},), purpose="generation")


def test_the_price_is_the_tables_and_billed_at_the_batch_rate_through_the_batch_api(tmp_path: Path) -> None:
    listed = price_for(MODEL, load_prices())
    assert listed is not None and listed.batch is not None
    price = ModelPrice.look_up(MODEL)
    assert price == ModelPrice(MODEL, listed)
    assert price.billed(batch_rates=False) == listed
    assert price.billed(batch_rates=True) == listed.at_batch_rate()
    assert ModelPrice.look_up("a-model-nobody-prices").billed(batch_rates=True) is None
    table = tmp_path / "prices.yaml"
    table.write_text(f"{MODEL}: {{input: 1.0, output: 2.0}}\n", encoding="utf-8")
    assert ModelPrice.look_up(MODEL, table).list_price == Price(input=1.0, output=2.0)  # the user's entry wins


async def test_a_client_given_its_price_costs_calls_by_it_and_reads_no_table(tmp_path: Path) -> None:
    def usage(_: dict[str, Any]) -> Reply:
        return Reply.text("一篇文章。", usage={"prompt_tokens": 1000, "completion_tokens": 1000})

    with FakeServer(usage) as server:
        endpoint = EndpointConfig(model="m", base_urls=(server.base_url,), max_retries=0)
        price = ModelPrice("m", Price(input=1.0, output=3.0))
        async with open_client(endpoint, workspace=tmp_path, prices=tmp_path / "never-read.yaml",
                               price=price) as client:
            result = await client.chat(REQUEST)
    assert result.ok and result.usage.cost_usd == pytest.approx(0.004)  # 1,000 x $1/M + 1,000 x $3/M
    with pytest.raises(ValueError, match="the price given is other's, not m's"):
        async with open_client(endpoint, workspace=tmp_path, price=ModelPrice("other", None)):
            pass


async def test_a_batch_client_reads_the_price_table_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batches' --max-cost bound and the client's accounts come from one lookup (there were two)."""
    read: list[str] = []
    table_of = accounting._read_table

    def counted(text: str, origin: str) -> accounting.PriceTable:  # every lookup reads the built-in table
        read.append(origin)
        return table_of(text, origin)

    monkeypatch.setattr(accounting, "_read_table", counted)
    with FakeBatchServer(server_handler(), polls=1) as server:
        endpoint = EndpointConfig(model=MODEL, base_urls=(server.base_url,))
        async with batch_client(endpoint, workspace=tmp_path, settings=BatchSettings(poll_s=0.02, quiet_s=0.1)
                                ) as client:
            result = await client.chat(REQUEST)
    assert result.ok, result.error
    assert read == ["(built-in)"]
