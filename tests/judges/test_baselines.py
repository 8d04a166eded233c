"""LLM baselines over the fake server: parsing, failures kept with raw text, samples, auto-plan ratios."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer, Reply
from howtobench.config import EndpointConfig
from howtobench.data.models import Item, Writing
from howtobench.judges.base import JUDGES
from howtobench.judges.baselines.autoplan import AutoPlanJudge
from howtobench.judges.baselines.common import pick_sample
from howtobench.judges.baselines.rubric import RubricJudge
from howtobench.judges.baselines.rubric_files import load_rubric
from howtobench.judges.baselines.single import SingleJudge
from howtobench.llm.client import open_client
from howtobench.llm.types import LLMClient

REFERENCE = "参考范文：春风又绿江南岸。"
WRITING = "待评作品：明月何时照我还。"


def item(sub_task: str = "散文", genre: str = "prose", language: str = "zh") -> Item:
    return Item(infer_id="i1", task_type="open", sub_task=sub_task, genre=genre, basic_instruction="写一篇散文",
                information="背景材料", reference=REFERENCE, language=language)


def writing(text: str = WRITING) -> Writing:
    return Writing(infer_id="i1", model="m1", output=text)


@asynccontextmanager
async def client_for(server: FakeServer, workspace: Path) -> AsyncIterator[LLMClient]:
    config = EndpointConfig(model="fake-judge", base_urls=(server.base_url,), max_retries=0, reasks=0)
    async with open_client(config, workspace=workspace) as client:
        yield client


def schema_of(request: dict[str, Any]) -> dict[str, Any]:
    return dict(request["response_format"]["json_schema"]["schema"])


async def test_single_parses_one_score_and_sends_an_enum_schema(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda req: Reply.json({"reason": "意境不足", "score": 4})
    async with client_for(fake_server, tmp_path) as client:
        judgment = await JUDGES["single"](client=client).judge(item(), writing())
    assert (judgment.method, judgment.status, judgment.score) == ("single", "ok", 4.0)
    assert judgment.leaves[0].name == "overall" and judgment.leaves[0].reason == "意境不足"
    assert judgment.judge_model == "fake-judge" and judgment.usage.calls == 1 and len(judgment.cache_keys) == 1
    assert judgment.reference_source == "human"
    request = fake_server.requests[0]
    assert schema_of(request)["properties"]["score"]["enum"] == list(range(1, 11))
    assert request["temperature"] == 0.0
    user = request["messages"][-1]["content"]
    assert REFERENCE in user and f"<<<WRITING>>>\n{WRITING}\n<<<END WRITING>>>" in user


async def test_reference_free_prompt_has_no_reference(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda req: Reply.json({"reason": "ok", "score": 6})
    async with client_for(fake_server, tmp_path) as client:
        judgment = await SingleJudge(client, with_reference=False).judge(item(language="en"), writing())
    user = fake_server.requests[0]["messages"][-1]["content"]
    assert REFERENCE not in user and "Human reference" not in user and "<<<REFERENCE>>>" not in user
    assert "Scores are whole numbers from 1 to 10: 1-2" in user
    assert judgment.meta["reference"] is False and judgment.reference_source is None


@pytest.mark.parametrize("reply", [Reply.json({"reason": "x", "score": 42}), Reply.text("七分吧"),
                                   Reply.truncated_json({"reason": "x", "score": 7})])
async def test_bad_reply_is_a_failure_with_raw_text(fake_server: FakeServer, tmp_path: Path, reply: Reply) -> None:
    fake_server.handler = lambda req: reply
    async with client_for(fake_server, tmp_path) as client:
        judgment = await SingleJudge(client).judge(item(), writing())
    assert (judgment.status, judgment.score) == ("failed", None)
    assert judgment.samples[0].status == "failed" and judgment.samples[0].raw_text
    assert judgment.failures and judgment.failures[0].startswith("sample 0:")


def by_seed(scores: dict[int, Any]) -> Any:
    def handle(req: dict[str, Any]) -> Reply:
        value = scores[req["seed"]]
        return value if isinstance(value, Reply) else Reply.json({"reason": "r", "score": value})

    return handle


async def test_self_consistency_keeps_every_sample_and_caches_each(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = by_seed({0: 4, 1: 6, 2: 9})
    async with client_for(fake_server, tmp_path) as client:
        judgment = await SingleJudge(client, samples=3).judge(item(), writing())
        again = await SingleJudge(client, samples=3).judge(item(), writing())
    assert judgment.score == pytest.approx(19 / 3) and judgment.status == "ok"
    assert [s.score for s in judgment.samples] == [4.0, 6.0, 9.0] and [s.index for s in judgment.samples] == [0, 1, 2]
    assert judgment.meta["sample_scores"] == [4.0, 6.0, 9.0] and judgment.meta["temperature"] == 0.7
    assert {r["temperature"] for r in fake_server.requests} == {0.7}
    assert len(fake_server.requests) == 3 and len(set(judgment.cache_keys)) == 3  # second run: all from the cache
    assert again.score == judgment.score and again.usage.cached_calls == 3
    assert (pick_sample(judgment, 0).score, pick_sample(judgment, 2).score) == (4.0, 9.0)


async def test_failed_sample_is_kept_and_the_mean_uses_the_others(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = by_seed({0: 4, 1: Reply.text("无法评分"), 2: 8})
    async with client_for(fake_server, tmp_path) as client:
        judgment = await SingleJudge(client, samples=3).judge(item(), writing())
    assert (judgment.status, judgment.score) == ("renormalized", 6.0)
    assert judgment.meta["sample_scores"] == [4.0, None, 8.0]
    assert judgment.samples[1].raw_text == "无法评分" and judgment.failures[0].startswith("sample 1:")


def autoplan_reply(seed: int) -> dict[str, Any]:
    aspects = [("结构", 8), ("语言", 6)] if seed == 0 else [("结构", 5), ("语言", 9), ("情感", 7)]
    return {"dimensions": [{"name": n, "reason": "r", "score": s} for n, s in aspects],
            "combination": "取平均" if seed == 0 else "语言更重要", "score": 7 if seed == 0 else 8}


async def test_autoplan_records_subscores_total_and_ratios(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda req: Reply.json(autoplan_reply(req.get("seed") or 0))
    async with client_for(fake_server, tmp_path) as client:
        single_run = await AutoPlanJudge(client).judge(item(), writing())
        sampled = await JUDGES["autoplan"](client=client, samples=2).judge(item(), writing())
    assert single_run.score == 7.0 and [(x.name, x.score) for x in single_run.leaves] == [("结构", 8.0), ("语言", 6.0)]
    assert single_run.meta["ratios"] == [[8 / 7, 6 / 7]] and single_run.meta["combination"] == ["取平均"]
    assert sampled.score == 7.5 and sampled.leaves == []  # the aspects differ between samples: no common leaves
    assert sampled.meta["ratios"] == [[8 / 7, 6 / 7], [5 / 8, 9 / 8, 7 / 8]]
    assert [len(s.leaves) for s in sampled.samples] == [2, 3]
    enum = schema_of(fake_server.requests[0])["properties"]["dimensions"]["items"]["properties"]["score"]["enum"]
    assert enum == list(range(1, 11))


def rubric_reply(req: dict[str, Any], overall: int = 7, drop: str | None = None) -> Reply:
    ids = schema_of(req)["properties"]["dimensions"]["required"]
    dims = {d: {"reason": "r", "score": k + 3} for k, d in enumerate(ids) if d != drop}
    return Reply.json({"dimensions": dims, "reason": "总体尚可", "score": overall})


async def test_rubric_scores_the_genre_dimensions(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = rubric_reply
    official = load_rubric("official")
    async with client_for(fake_server, tmp_path) as client:
        judgment = await RubricJudge(client).judge(item("公文", "others"), writing())
    assert (judgment.score, judgment.status, judgment.meta["rubric"]) == (7.0, "ok", "official")
    assert [(x.name, x.score) for x in judgment.leaves] == [(d.id, k + 3.0) for k, d in enumerate(official.dimensions)]
    user = fake_server.requests[0]["messages"][-1]["content"]
    assert all(f"{d.label.en} ({d.id})" in user for d in official.dimensions)


@pytest.mark.parametrize(("language", "numbering"), [(None, "{k}) {label}: "), ("zh", "{k}）{label}：")])
async def test_rubric_prompt_carries_every_sub_criterion(
    fake_server: FakeServer, tmp_path: Path, language: str | None, numbering: str
) -> None:
    fake_server.handler = rubric_reply
    fiction = load_rubric("fiction")
    options = {"prompt_language": language} if language else {}
    async with client_for(fake_server, tmp_path) as client:
        judgment = await RubricJudge(client, **options).judge(item("小说", "fiction"), writing())
    assert judgment.status == "ok"
    user = fake_server.requests[0]["messages"][-1]["content"]
    lang = language or "en"  # English prompts by default, as the authors'
    rubric_part = user[user.index(fiction.dimensions[0].label.get(lang)):]
    for dim in fiction.dimensions:
        for k, crit in enumerate(dim.criteria, start=1):
            line = numbering.format(k=k, label=crit.label.get(lang)) + crit.description.get(lang)
            assert line in rubric_part, line
    assert sum(len(d.criteria) for d in fiction.dimensions) == 16  # Appendix H.7: 3+3+3+3+2+2


async def test_rubric_reply_missing_a_dimension_fails(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda req: rubric_reply(req, drop="format")
    async with client_for(fake_server, tmp_path) as client:
        judgment = await RubricJudge(client).judge(item("公文", "others"), writing())
    assert (judgment.status, judgment.score) == ("failed", None)
    assert "format" not in json.loads(judgment.samples[0].raw_text or "{}")["dimensions"]
    assert judgment.failures[0].startswith("sample 0:")


async def test_empty_writing_gets_the_lowest_score_without_a_call(fake_server: FakeServer, tmp_path: Path) -> None:
    async with client_for(fake_server, tmp_path) as client:
        judgment = await RubricJudge(client, samples=3).judge(item("诗歌", "poem"), writing("  "))
    assert fake_server.requests == []
    assert (judgment.status, judgment.score, judgment.samples, judgment.failures) == ("empty", 1.0, [], [])
    assert {x.score for x in judgment.leaves} == {1.0} and len(judgment.leaves) == len(load_rubric("poem").dimensions)


@pytest.mark.parametrize(("language", "dimensions"), [
    (None, ["1. Content:", "2. Language:", "3. Structure:", "4. Overall impression:"]),
    ("zh", ["1. 内容：", "2. 语言：", "3. 结构：", "4. 整体印象："]),
])
async def test_single_pass_lists_the_authors_four_dimensions_without_a_cap(
    fake_server: FakeServer, tmp_path: Path, language: str | None, dimensions: list[str]
) -> None:
    """The authors' llm_single_pass asks for one overall score over content, language, structure and overall
    impression, with a brief explanation and no length limit."""
    fake_server.handler = lambda req: Reply.json({"reason": "ok", "score": 6})
    options = {} if language is None else {"prompt_language": language}
    async with client_for(fake_server, tmp_path) as client:
        judgment = await SingleJudge(client, **options).judge(item(), writing())
    user = fake_server.requests[0]["messages"][-1]["content"]
    tail = user.split("<<<END WRITING>>>")[1]
    assert all(d in tail for d in dimensions) and judgment.prompt_language == (language or "en")
    assert "60 words" not in tail and "80" not in tail
    assert "maxLength" not in json.dumps(fake_server.requests[0]["response_format"])


def test_reply_schemas_are_closed_objects_with_reason_before_score() -> None:
    """The schemas are part of every cache key (llm/keys.py): their exact shape, key order included, is pinned."""
    class NoCalls:
        model = "m"

    score = {"type": "integer", "enum": list(range(1, 11))}
    entry = {"type": "object", "properties": {"reason": {"type": "string"}, "score": score},
             "required": ["reason", "score"], "additionalProperties": False}
    assert json.dumps(SingleJudge(NoCalls()).schema(item())) == json.dumps(entry)  # type: ignore[arg-type]
    aspect = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40},
                                               "reason": {"type": "string"}, "score": score},
              "required": ["name", "reason", "score"], "additionalProperties": False}
    assert json.dumps(AutoPlanJudge(NoCalls()).schema(item())) == json.dumps(  # type: ignore[arg-type]
        {"type": "object", "properties": {"dimensions": {"type": "array", "items": aspect, "minItems": 2,
                                                         "maxItems": 6},
                                          "combination": {"type": "string"},
                                          "score": {**score, "description": "overall score S"}},
         "required": ["dimensions", "combination", "score"], "additionalProperties": False})
    rubric = RubricJudge(NoCalls())  # type: ignore[arg-type]
    ids = [d.id for d in rubric.rubric(item()).dimensions]
    assert json.dumps(rubric.schema(item())) == json.dumps(
        {"type": "object", "properties": {"dimensions": {"type": "object", "properties": {i: entry for i in ids},
                                                         "required": ids, "additionalProperties": False},
                                          "reason": {"type": "string"},
                                          "score": {**score, "description": "overall score"}},
         "required": ["dimensions", "reason", "score"], "additionalProperties": False})
