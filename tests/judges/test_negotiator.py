"""J_W: one call per instruction shared across models, constraints re-asked then repaired and recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tow_fakes import GUIDE_WEIGHTS, fake_client, schema_name, tow_handler

from fake_server import FakeServer, Reply, script
from howtobench.data.models import Item
from howtobench.judges.negotiator import (
    Negotiator,
    problems,
    repair_kind,
    repair_kinds,
    repair_weights,
    sample_weights,
)
from howtobench.judges.prompts import Prompts
from howtobench.judges.tree import default_tree

TREE = default_tree()
CONTENT, FORMAT = TREE.nodes[0], TREE.nodes[1]


def item(k: int = 0, task: str = "guide") -> Item:
    return Item(infer_id=f"i{k}", task_type=task, basic_instruction=f"写第{k}篇", reference="范文")


def negotiator(client, reasks: int = 2) -> Negotiator:  # type: ignore[no-untyped-def]
    return Negotiator(client, TREE, Prompts(TREE), reasks=reasks)


def weight_requests(server: FakeServer) -> list:
    return [r for r in server.requests if schema_name(r) == "weights"]


async def test_ten_concurrent_judgments_of_one_item_make_one_call(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        neg = negotiator(client)
        results = await asyncio.gather(*(neg.weights(item(k % 3)) for k in range(30)))
    assert len(weight_requests(fake_server)) == 3
    assert sum(fresh for _, fresh in results) == 3
    first = results[0][0]
    assert first.weights == GUIDE_WEIGHTS and first.repairs == ()
    assert first.flat()["plots"] == 0.5


async def test_completion_negotiates_content_only(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client).weights(item(task="completion"))
    assert list(negotiation.weights or {}) == ["content"]
    [request] = weight_requests(fake_server)
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["content", "explanation"]


async def test_broken_reply_is_reasked_with_the_reason(fake_server: FakeServer, tmp_path: Path) -> None:
    content = {"opening_ending": 0.9, "language": 0.9, "logic": 0.1, "emotion": 0.1}
    bad = {"content": content, "format": GUIDE_WEIGHTS["format"], "explanation": "why"}
    fake_server.handler = script(Reply.json(bad), then=tow_handler())
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client).weights(item())
    requests = weight_requests(fake_server)
    assert len(requests) == 2
    assert "sum to 2" in requests[1]["messages"][-1]["content"]
    assert negotiation.weights == GUIDE_WEIGHTS and negotiation.repairs == ()
    assert len(negotiation.cache_keys) == 2


async def test_still_broken_is_repaired_and_recorded(fake_server: FakeServer, tmp_path: Path) -> None:
    bad = {"content": {"opening_ending": 1.5, "language": 0.5, "logic": 0.5, "emotion": -0.5},
           "format": {"plots": 0.0, "paragraphing": 0.0, "formatting": 0.0}}
    fake_server.handler = tow_handler(weights=bad)
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client, reasks=1).weights(item())
    assert len(weight_requests(fake_server)) == 2
    weights = negotiation.weights or {}
    # the nearest plan within ±0.98 summing to 1: 1.5 capped at 0.98, the other three shifted down alike by 0.16
    assert weights["content"] == pytest.approx(
        {"opening_ending": 0.98, "language": 0.34, "logic": 0.34, "emotion": -0.66})
    # equal weights stay equal: the nearest plan to {0, 0, 0} is 1/3 each
    assert weights["format"] == pytest.approx({"plots": 1 / 3, "paragraphing": 1 / 3, "formatting": 1 / 3})
    assert negotiation.repairs[0] == "constraints still broken after 1 re-ask(s)"
    assert all("nearest plan" in r for r in negotiation.repairs[1:])
    assert [repair_kind(r) for r in negotiation.repairs] == [None, "clipped", "clipped"]


async def test_rounding_is_rescaled_and_noted(fake_server: FakeServer, tmp_path: Path) -> None:
    thirds = {**GUIDE_WEIGHTS, "format": {"plots": 0.33, "paragraphing": 0.33, "formatting": 0.33}}
    fake_server.handler = tow_handler(weights=thirds)
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client).weights(item())
    assert len(weight_requests(fake_server)) == 1
    assert (negotiation.weights or {})["format"]["plots"] == pytest.approx(1 / 3)
    assert negotiation.repairs == ("format: rescaled weights summing to 0.99 to sum 1",)
    assert repair_kinds(negotiation.repairs) == {"rescaled"}


async def test_a_sum_off_by_float_noise_is_rescaled_silently(fake_server: FakeServer, tmp_path: Path) -> None:
    """Weights printed to six decimals (0.333333 x 3 = 0.999999) were shown as a repair ("rescaled weights summing
    to 0.999999"), counted on the leaderboard next to real repairs; they are noise, not the judge's rounding."""
    sixths = {**GUIDE_WEIGHTS, "format": {"plots": 0.333333, "paragraphing": 0.333333, "formatting": 0.333333}}
    fake_server.handler = tow_handler(weights=sixths)
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client).weights(item())
    assert negotiation.repairs == () and repair_kinds(negotiation.repairs) == set()
    fmt = (negotiation.weights or {})["format"]
    assert sum(fmt.values()) == pytest.approx(1, abs=1e-12) and fmt["plots"] == pytest.approx(1 / 3, abs=1e-12)


async def test_failed_call_gives_no_weights(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler(weights=lambda _: Reply.text("not json at all"))
    async with fake_client(fake_server, tmp_path, reasks=0) as client:
        negotiation, _ = await negotiator(client).weights(item())
    assert negotiation.weights is None and negotiation.error and "weights" in negotiation.error


async def test_samples_are_distinct_calls(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        samples, fresh = await negotiator(client).sample(item(), 4)
    requests = weight_requests(fake_server)
    assert fresh and [s.sample_index for s in samples] == [0, 1, 2, 3]
    assert len(requests) == 4 and all(r["temperature"] == 0.7 for r in requests)


def test_problems_and_repair_rules() -> None:
    assert problems(FORMAT, {"plots": 0.5, "paragraphing": 0.3, "formatting": 0.2}) == []
    missing = problems(FORMAT, {"plots": 0.5})
    assert missing == ["format: missing or non-numeric weights for ['paragraphing', 'formatting']"]
    assert "outside (-1, 1)" in problems(FORMAT, {"plots": 1.0, "paragraphing": 0.3, "formatting": -0.3})[0]
    assert problems(FORMAT, {"plots": True, "paragraphing": 0.5, "formatting": 0.5})  # booleans are not numbers
    weights, note = repair_weights(FORMAT, {"plots": 0.9, "paragraphing": 0.9, "formatting": -0.9})
    third = 0.1 / 3  # the sum 0.9 is 0.1 short: every weight moves up alike
    assert weights == pytest.approx({"plots": 0.9 + third, "paragraphing": 0.9 + third, "formatting": -0.9 + third})
    assert repair_kind(note) == "clipped"
    # a sum of 0 has no scale to divide by, but still a plan: the nearest one keeps its order
    weights, note = repair_weights(FORMAT, {"plots": 0.5, "paragraphing": -0.5, "formatting": 0.0})
    assert weights == pytest.approx({"plots": 5 / 6, "paragraphing": -1 / 6, "formatting": 1 / 3})
    assert repair_kind(note) == "clipped"
    weights, note = repair_weights(FORMAT, {"plots": 0.5, "paragraphing": "a lot", "formatting": 0.5})
    assert weights == pytest.approx({"plots": 1 / 3, "paragraphing": 1 / 3, "formatting": 1 / 3})
    assert repair_kind(note) == "uniform"  # no plan to keep: the only uniform case
    # a note quotes J_W's reply: words inside it do not change what the repair was
    _, note = repair_weights(FORMAT, {"plots": 2.0, "paragraphing": 0.5, "formatting": 0.5, "x used uniform 1/3": 1})
    assert repair_kind(note) == "clipped"
    assert CONTENT.negotiated


@pytest.mark.parametrize(("given", "expected"), [
    ({"plots": 1, "paragraphing": 0, "formatting": 0}, {"plots": 0.98, "paragraphing": 0.01, "formatting": 0.01}),
    ({"plots": 1.1, "paragraphing": -0.1, "formatting": 0}, {"plots": 0.98, "paragraphing": -0.04, "formatting": 0.06}),
])
def test_a_group_on_one_leaf_stays_on_it(given: dict, expected: dict) -> None:
    """The open interval (-1, 1) excludes 1.0, but the judge's choice is kept as nearly as it allows (never
    uniform), and the repair is counted."""
    weights, note = repair_weights(FORMAT, given)
    assert weights == pytest.approx(expected) and sum(weights.values()) == pytest.approx(1)
    assert repair_kind(note) == "clipped" and "nearest plan within ±0.98" in note


async def test_a_plan_of_one_leaf_keeps_it_through_the_judge(fake_server: FakeServer, tmp_path: Path) -> None:
    one_leaf = {**GUIDE_WEIGHTS, "format": {"plots": 1.0, "paragraphing": 0.0, "formatting": 0.0}}
    fake_server.handler = tow_handler(weights=one_leaf)
    async with fake_client(fake_server, tmp_path) as client:
        negotiation, _ = await negotiator(client, reasks=1).weights(item())
    assert len(weight_requests(fake_server)) == 2  # re-asked once with the reason, then repaired
    assert (negotiation.weights or {})["format"]["plots"] >= 0.9
    assert repair_kinds(negotiation.repairs) == {"clipped"}


async def test_sample_weights_for_the_inconsistency_analysis(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        samples = await sample_weights(client, item(task="completion"), 3)
        again = await sample_weights(client, item(task="completion"), 3)
    assert [s.flat() for s in samples] == [s.flat() for s in again]
    assert len(weight_requests(fake_server)) == 3  # the second round came from the cache
    assert set(samples[0].flat()) == {"opening_ending", "language", "logic", "emotion"}
