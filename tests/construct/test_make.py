"""Task making: Completion blanks exact; Guide/Open from back-construction with fields in their limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from construct_helpers import fake_client

from fake_server import Reply
from howtobench.construct import prompts
from howtobench.construct.backconstruct import problems, traits_of
from howtobench.construct.completion import BLANK
from howtobench.construct.make import make, pending, planned_requests, tasks_for
from howtobench.construct.records import Classified, DraftItem, Rated, SourceText
from howtobench.construct.text import theme_length
from howtobench.construct.workfile import CLASSIFY, FILTER, INGEST, ITEMS, read_stage, write_rows


def _keep_all(build_dir: Path, genre: str = "prose") -> list[SourceText]:
    texts = list(read_stage(build_dir / INGEST, SourceText, "text_id").values())
    write_rows(build_dir / CLASSIFY, [Classified(text_id=t.text_id, source=t.source, language=t.language,
                                                 genre=genre, ok=True) for t in texts])
    write_rows(build_dir / FILTER, [Rated(text_id=t.text_id, source=t.source, genre=genre, language=t.language,
                                          score=5, ok=True, kept=True) for t in texts])
    return texts


def _answer(theme: str) -> Any:
    def handler(req: dict[str, Any]) -> Reply:
        traits = req["response_format"]["json_schema"]["schema"]["properties"]["information"]["properties"]
        zh = "菜市场" in req["messages"][1]["content"]
        return Reply.json({"summary": "写清晨菜市场的一天" if zh else "A keeper tends his light.",
                           "theme": theme if not zh else "清晨菜市场",
                           "information": {t: f"关于{t}的要求" for t in traits}})
    return handler


async def test_items_for_every_task(fake_server, build_dir: Path, tmp_path: Path) -> None:
    texts = _keep_all(build_dir)
    assert len(planned_requests(build_dir, ("completion", "guide", "open"))) == 2
    fake_server.handler = _answer("The lighthouse keeper")
    async with fake_client(fake_server, tmp_path / "ws") as client:
        report = await make(build_dir, client, seed=3)
    assert report.made == {"completion": 2, "guide": 2, "open": 2} and report.failed == {}
    assert len(fake_server.requests) == 2  # one back-construction call per text, shared by guide and open
    items = read_stage(build_dir / ITEMS, DraftItem, "item_id")
    zh, en = texts
    comp = items[f"{zh.text_id}-completion"]
    assert comp.information.count(BLANK) == 1 and comp.information.replace(BLANK, comp.reference) == zh.text
    guide, open_ = items[f"{zh.text_id}-guide"], items[f"{zh.text_id}-open"]
    assert guide.instruction == ("请写一篇散文，主题为“清晨菜市场”。内容概要：写清晨菜市场的一天。"
                                 "请按照下面给出的写作要求展开。")
    assert guide.information.splitlines() == [f"- {t}：关于{t}的要求" for t in traits_of("prose", "zh")]
    assert open_.information == "" and open_.reference == guide.reference == zh.text
    en_open = items[f"{en.text_id}-open"]
    assert en_open.instruction == ('Write a text of the genre prose on the theme "The lighthouse keeper". '
                                   "In brief: A keeper tends his light.")
    assert theme_length(en_open.theme, "en") <= 5 and theme_length(guide.theme, "zh") <= 10
    assert pending(build_dir, ("completion", "guide", "open")) == []


async def test_long_theme_is_reasked_then_failed(fake_server, build_dir: Path, tmp_path: Path) -> None:
    _keep_all(build_dir, genre="fiction")
    fake_server.handler = _answer("a theme that is far too long to pass")
    async with fake_client(fake_server, tmp_path / "ws") as client:
        report = await make(build_dir, client, tasks=("guide", "open"))
    assert report.made == {"guide": 1, "open": 1} and report.failed == {"guide": 1, "open": 1}
    assert len(fake_server.requests) == 3  # zh once; en asked, told why, asked again
    assert "longer than 5 words" in fake_server.requests[-1]["messages"][-1]["content"]
    assert any("longer than 5 words" in e for e in report.errors)
    fake_server.handler = _answer("Keeper of the light")
    # a rejected reply is in the cache (it was a valid JSON reply); a retry that should reach the model
    # again needs the cache off or another workspace — here another workspace
    async with fake_client(fake_server, tmp_path / "ws2") as client:
        report = await make(build_dir, client, tasks=("guide", "open"), retry_failed=True)
    assert report.made == {"guide": 2, "open": 2} and report.failed == {}


async def test_completion_needs_no_model(build_dir: Path) -> None:
    _keep_all(build_dir)
    report = await make(build_dir, None, tasks=("completion",))
    assert report.made == {"completion": 2}


async def test_split_gives_each_text_one_task(build_dir: Path) -> None:
    _keep_all(build_dir)
    picks = {tasks_for(f"t{i:012x}", ("completion", "guide", "open"), split=True, seed=0) for i in range(40)}
    assert picks == {("completion",), ("guide",), ("open",)}  # every task drawn, one per text
    assert tasks_for("t000000000001", ("open",), split=True, seed=0) == ("open",)
    report = await make(build_dir, None, tasks=("completion",), split=True)
    assert report.made == {"completion": 2}


def test_copied_example_is_a_problem() -> None:
    example = prompts.example_for("prose", "zh")
    traits = traits_of("prose", "zh")
    info = {t: "x" for t in traits}
    copied = {"summary": example["summary"], "theme": "别的主题", "information": info}
    assert "repeats the example" in (problems(copied, "zh", traits, example) or "")
    own = {"summary": "写老井。", "theme": "村口老井", "information": info}
    assert problems(own, "zh", traits, example) is None
    too_long = {**own, "theme": "一口养育了全村人的老井和它的故事"}
    assert "longer than 10 characters" in (problems(too_long, "zh", traits) or "")
