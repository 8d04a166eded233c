"""Generation against the fake OpenAI-compatible server: the prompt of each task, the output format, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_server import FakeServer, Reply, script
from howtobench.config import EndpointConfig
from howtobench.data.loader import load_items, load_writings_file
from howtobench.data.models import Item, Writing
from howtobench.errors import DataError
from howtobench.generate import (
    GenerateSettings,
    build_request,
    failures_path,
    generate_writings,
    render_prompt,
    split_reasoning,
)
from howtobench.judges.base import Judgment
from howtobench.llm.client import open_client
from howtobench.llm.types import SamplingParams


def _item(task: str, information: str = "", **kw: str) -> Item:
    return Item(
        infer_id=kw.get("id", f"{task}_1"),
        task_type=task,  # type: ignore[arg-type]
        sub_task="议论文",
        genre="argumentative",
        basic_instruction=kw.get("instruction", "请写一篇文章。"),
        information=information,
        reference="参考",
        bench_id="b1",
    )


ITEMS = [
    _item("completion", "第一段。\n\n[fill in the blank]\n\n第三段。", id="c1", instruction="请补全文中缺失的内容。"),
    _item("guide", "- 要点一\n- 要点二", id="g1", instruction="请写一篇关于读书的演讲稿。"),
    _item("open", "", id="o1", instruction="请写一封辞职信。"),
]


def test_release_style_sends_the_two_fields_joined_by_a_blank_line() -> None:
    """What the paper's models were asked (the release records their task as exactly these two fields)."""
    completion, guide, opened = (render_prompt(it) for it in ITEMS)
    assert completion == "请补全文中缺失的内容。\n\n第一段。\n\n[fill in the blank]\n\n第三段。"
    assert guide == "请写一篇关于读书的演讲稿。\n\n- 要点一\n- 要点二"
    assert opened == "请写一封辞职信。"
    assert render_prompt(ITEMS[1], "en") == guide  # the release's own words whatever the prompt language
    request = build_request(ITEMS[0], GenerateSettings())
    assert request.messages == ({"role": "user", "content": completion},)
    assert request.template_version == build_request(ITEMS[1], GenerateSettings()).template_version


def test_framed_style_is_a_named_option() -> None:
    framed = GenerateSettings(prompt_style="framed")
    completion, guide, opened = (render_prompt(it, style="framed") for it in ITEMS)
    assert completion.startswith("请补全文中缺失的内容。")
    assert "[fill in the blank]" in completion and "第一段。" in completion and "只输出你补写的文字本身" in completion
    assert guide.startswith("请写一篇关于读书的演讲稿。") and "- 要点一\n- 要点二" in guide and "提纲" in guide
    assert opened.startswith("请写一封辞职信。") and "要点" not in opened and "原文" not in opened
    english = render_prompt(ITEMS[1], "en", style="framed")
    assert "OUTLINE BEGINS" in english and "- 要点一" in english
    assert build_request(ITEMS[1], framed).messages[-1]["content"] == guide
    release = build_request(ITEMS[1], GenerateSettings())
    assert build_request(ITEMS[1], framed).template_version != release.template_version
    with pytest.raises(DataError, match="unknown prompt style"):
        render_prompt(ITEMS[0], style="fancy")  # type: ignore[arg-type]


def test_request_records_settings() -> None:
    settings = GenerateSettings(
        sampling=SamplingParams(temperature=0.3, max_tokens=99, seed=5), system_prompt="你是作家。"
    )
    req = build_request(ITEMS[2], settings)
    assert req.messages[0] == {"role": "system", "content": "你是作家。"}
    assert req.messages[1]["role"] == "user" and req.purpose == "generation"
    assert req.sampling.max_tokens == 99 and len(req.template_version) == 16
    framed = GenerateSettings(prompt_style="framed")
    assert build_request(ITEMS[0], framed).template_version != build_request(ITEMS[2], framed).template_version


def test_split_reasoning() -> None:
    assert split_reasoning("<think>plan it</think>\n正文", None) == ("正文", "plan it")
    assert split_reasoning("正文", "from server") == ("正文", "from server")


def test_release_marker_is_used(bench_root: Path) -> None:
    items = load_items(bench_root, ["completion"])
    with_marker = [it for it in items if "[fill in the blank]" in it.information]
    assert len(with_marker) >= 370
    assert "[fill in the blank]" in render_prompt(with_marker[0])
    assert render_prompt(with_marker[0]) == with_marker[0].instruction + "\n\n" + with_marker[0].information


async def test_generate_and_resume(fake_server: FakeServer, tmp_path: Path) -> None:
    endpoint = EndpointConfig(model="writer-x", base_urls=(fake_server.base_url,), max_retries=0)
    out = tmp_path / "writings" / "writer-x.jsonl"
    fake_server.handler = script(
        Reply.text("<think>先想想</think>补写的句子。"), Reply.text("演讲稿正文"), Reply.text("")
    )
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        summary = await generate_writings(client, ITEMS, out, concurrency=1, progress=False)
    assert (summary.written, summary.empty, summary.failed, summary.skipped) == (3, 1, 0, 0)
    sent = [r["messages"][-1]["content"] for r in fake_server.requests]
    assert sent == [render_prompt(it) for it in ITEMS]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_id = {r["infer_id"]: r for r in rows}
    assert by_id["c1"]["output"] == "补写的句子。" and by_id["c1"]["reasoning"] == "先想想"
    assert by_id["o1"]["output"] == ""  # an empty answer is kept as an empty writing
    assert set(rows[0]) >= {"infer_id", "bench_id", "task_type", "sub_task", "model", "output", "generation"}
    assert by_id["g1"]["generation"]["sampling"]["temperature"] == 0.7
    writings = load_writings_file(out, {it.id: it for it in ITEMS})
    assert {w.item_id for w in writings} == {"c1", "g1", "o1"} and writings[0].model == "writer-x"

    fake_server.reset()
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        again = await generate_writings(client, ITEMS, out, progress=False)
    assert fake_server.requests == [] and again.skipped == 3 and again.written == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


async def test_failed_call_is_not_a_writing(fake_server: FakeServer, tmp_path: Path) -> None:
    endpoint = EndpointConfig(model="writer-y", base_urls=(fake_server.base_url,), max_retries=0)
    out = tmp_path / "w.jsonl"
    fake_server.handler = script(Reply.error(400, "maximum context length is 8192 tokens"),  # writing-level
                                 then=lambda req: Reply.text("好文章"))
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        summary = await generate_writings(client, ITEMS[2:], out, progress=False)
    assert summary.failed == 1 and summary.written == 0
    assert out.read_text(encoding="utf-8") == ""
    assert json.loads(failures_path(out).read_text(encoding="utf-8"))["infer_id"] == "o1"
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        retry = await generate_writings(client, ITEMS[2:], out, progress=False)
    assert retry.written == 1 and not failures_path(out).exists()


def test_torn_last_line_is_cut(tmp_path: Path) -> None:
    from howtobench.generate import read_generated

    path = tmp_path / "w.jsonl"
    path.write_text('{"infer_id": "a", "model": "m", "output": "x"}\n{"infer_id": "b", "mo', encoding="utf-8")
    assert read_generated(path, "m") == {"a"}
    assert path.read_text(encoding="utf-8").endswith("}\n")
    with pytest.raises(Exception, match="expected 'other'"):
        read_generated(path, "other")


FINISH_ITEMS = [_item("open", id=f"o{k}", instruction=f"请写第{k}篇文章。") for k in range(1, 6)]


async def test_finish_reason_decides_truncated_or_failed(fake_server: FakeServer, tmp_path: Path) -> None:
    """length with text: kept, flagged truncated; empty + length / content_filter, or an unclosed <think>: a failed
    generation with its reason, never an empty writing; an empty answer the model chose to stop on stays empty."""
    endpoint = EndpointConfig(model="writer-z", base_urls=(fake_server.base_url,), max_retries=0)
    out = tmp_path / "w.jsonl"
    replies = {
        "请写第1篇文章。": Reply.text("写到一半", finish_reason="length"),
        "请写第2篇文章。": Reply.text("", finish_reason="length"),
        "请写第3篇文章。": Reply.text("<think>先想想，再想想", finish_reason="length"),
        "请写第4篇文章。": Reply.text("", finish_reason="content_filter"),
        "请写第5篇文章。": Reply.text("", finish_reason="stop"),
    }
    fake_server.handler = lambda req: next(r for k, r in replies.items() if k in req["messages"][-1]["content"])
    settings = GenerateSettings(sampling=SamplingParams(temperature=0.7, max_tokens=64, seed=0))
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        summary = await generate_writings(client, FINISH_ITEMS, out, settings=settings, progress=False)
    assert (summary.written, summary.truncated, summary.empty, summary.failed) == (2, 1, 1, 3)
    rows = {r["infer_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["o1"]["output"] == "写到一半" and rows["o1"]["truncated"] is True
    assert rows["o1"]["generation"]["finish_reason"] == "length"
    assert rows["o5"]["output"] == "" and rows["o5"]["truncated"] is False
    failed = {r["infer_id"]: r for r in map(json.loads, failures_path(out).read_text(encoding="utf-8").splitlines())}
    assert failed["o2"]["error"] == ("empty answer: the max_tokens of 64 ran out before the model wrote anything "
                                     "(finish_reason 'length'); raise --max-tokens")
    assert failed["o3"]["error"].startswith("reasoning never ended: the reply opens <think> and never closes it "
                                            "(finish_reason 'length')")
    assert failed["o3"]["raw_text"] == "<think>先想想，再想想"
    assert failed["o4"]["error"] == ("empty answer: the server's content filter stopped it before the model wrote "
                                     "anything (finish_reason 'content_filter')")
    writings = {w.item_id: w for w in load_writings_file(out, FINISH_ITEMS)}
    assert writings["o1"].truncated and not writings["o5"].truncated
    # a re-run gets the same replies from the cache: still failed with the same reasons, nothing written
    fake_server.reset()
    async with open_client(endpoint, workspace=tmp_path / "ws") as client:
        again = await generate_writings(client, FINISH_ITEMS, out, settings=settings, progress=False)
    assert fake_server.requests == [] and (again.written, again.failed, again.skipped) == (0, 3, 2)
    assert {json.loads(line)["error"] for line in failures_path(out).read_text(encoding="utf-8").splitlines()} == {
        failed[k]["error"] for k in ("o2", "o3", "o4")}


async def test_truncated_writing_is_counted_on_the_leaderboard(tmp_path: Path) -> None:
    from howtobench.judges.runner import run_judge
    from howtobench.report.leaderboard import LeaderboardOptions, build_leaderboard
    from howtobench.report.render import counts_grid

    class Fixed:
        method = "fixed"

        async def judge(self, item: Item, writing: Writing) -> Judgment:
            return Judgment(method="fixed", item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                            score=5.0)

    pairs = [(it, Writing(infer_id=it.id, model="m", output="x", truncated=it.id == "o1")) for it in FINISH_ITEMS[:3]]
    judgments = await run_judge(Fixed(), pairs, tmp_path / "j.jsonl", progress=False)
    assert [j.writing_truncated for j in judgments] == [True, False, False]
    lb = build_leaderboard(judgments, LeaderboardOptions(n_boot=0))
    assert lb.counts["m"].truncated == 1
    header, body = counts_grid(lb)
    assert dict(zip(header, body[0], strict=True))["truncated"] == "1"
    warning = "m: 1 writings were cut short by max_tokens or a content filter (truncated), judged as written"
    assert warning in lb.warnings


async def test_a_run_level_error_stops_generation_without_writing_a_failure(tmp_path: Path) -> None:
    from fake_clients import HANG, FakeClient, reply
    from howtobench.errors import CacheMiss

    out = tmp_path / "w.jsonl"
    by_item = {"c1": reply("补全的段落。"), "g1": CacheMiss("replay mode: call 1234 is not cached"), "o1": HANG}
    by_prompt = {render_prompt(it): by_item[it.id] for it in ITEMS}
    client = FakeClient(lambda request: by_prompt[request.messages[-1]["content"]])
    with pytest.raises(CacheMiss):
        await generate_writings(client, ITEMS, out, progress=False)
    assert client.cancelled == 1
    assert [json.loads(line)["infer_id"] for line in out.read_text(encoding="utf-8").splitlines()] == ["c1"]
    assert not failures_path(out).exists()  # a replay miss is not the model's failure to write
    rerun = FakeClient(lambda request: reply("好。"))
    summary = await generate_writings(rerun, ITEMS, out, progress=False)
    assert (summary.skipped, summary.written, summary.failed, len(rerun.calls)) == (1, 2, 0, 2)
