"""`POST /get_reward` in OpenRLHF's contract, over a fake judge: exact rewards, exact judge calls, no made-up
numbers, run-level errors as 503, health and metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fake_server import FakeServer, Reply
from howtobench.data.loader import load_items
from howtobench.data.models import Writing
from howtobench.judges.options import judge_options
from howtobench.judges.runner import judge_or_fail
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.client import open_client
from judge_replies import server_handler
from reward_serving import GUIDE, endpoint_of, judge_calls, openrlhf_body, running, settings_for

PROMPT = "<|im_start|>user\n写一篇文章<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = [f"# 标题\n\n第{k}段，{'文' * (10 + 7 * k)}。\n\n## 小节\n\n结尾。" for k in range(4)]


async def direct_rewards(server: FakeServer, workspace: Path, data: Path, responses: list[str]) -> list[float | None]:
    """What the judge layer gives for the same writings, called directly (its own workspace)."""
    item = next(i for i in load_items(data, ["guide"]) if i.id == GUIDE.split("/")[1])
    async with open_client(endpoint_of(server), workspace=workspace) as client:
        judge = TreeOfWriting(client)
        out = []
        for text in responses:
            judgment = await judge_or_fail(judge, item, Writing(infer_id=item.id, model="policy", output=text))
            out.append(judgment.score)
        return out


async def test_a_group_gets_the_direct_rewards_for_1_plus_7n_judge_calls_and_again_from_the_cache(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = server_handler()
    expected = await direct_rewards(fake_server, tmp_path / "direct", bench_root, RESPONSES)
    fake_server.reset()
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES, GUIDE))
        assert status == 200
        assert answer["rewards"] == pytest.approx(expected) and None not in expected
        assert answer["scores"] == pytest.approx([r / 10 for r in expected])
        assert len(judge_calls(fake_server)) == 1 + 7 * len(RESPONSES)
        assert answer["failures"] == [None] * 4 and answer["substituted"] == [None] * 4
        logs = answer["extra_logs"]
        assert logs["howtobench/root"] == pytest.approx(expected)
        assert {"howtobench/content", "howtobench/format", "howtobench/impression", "howtobench/logic",
                "howtobench/formatting", "howtobench/failed", "howtobench/response_chars"} <= set(logs)
        assert logs["howtobench/response_chars"] == [len(r) for r in RESPONSES]  # the <|im_end|> is not writing
        fake_server.reset()
        status, again, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES, GUIDE))
        assert status == 200 and again["rewards"] == answer["rewards"] and judge_calls(fake_server) == []
        _, metrics = await app.get("/metrics")
    assert 'howtobench_requests_total{route="get_reward",status="200"} 2.0' in metrics
    # the second request: 28 leaf calls from the cache, the weights from the negotiator's memo
    assert "howtobench_judge_calls 29.0" in metrics and "howtobench_judge_cache_hits 28.0" in metrics
    assert 'howtobench_score_mean{name="logic"}' in metrics and "howtobench_response_chars_mean" in metrics
    assert 'howtobench_samples_total{outcome="judged"} 8.0' in metrics


async def test_openrlhf_one_rollout_per_request_costs_the_same_calls(fake_server: FakeServer, tmp_path: Path,
                                                                     bench_root: Path) -> None:
    """OpenRLHF sends each rollout in its own request, all of a group at once: still one weights call."""
    import asyncio

    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        answers = await asyncio.gather(*(app.post("/get_reward", openrlhf_body(PROMPT, [r], GUIDE))
                                         for r in RESPONSES))
    assert [status for status, _, _ in answers] == [200] * 4
    assert len(judge_calls(fake_server)) == 1 + 7 * 4
    assert sum(1 for r in judge_calls(fake_server) if r["response_format"]["json_schema"]["name"] == "weights") == 1


def garbage(request: dict) -> Reply:
    if not request.get("response_format"):
        return Reply.text("pong")
    return Reply.text("I would rather not say")


async def test_a_judge_answering_garbage_gives_an_all_failed_group_one_flagged_constant(
        fake_server: FakeServer, tmp_path: Path) -> None:
    """The default (group-mean): a group with no judged sample gets 0 for every sample — zero advantage, and
    OpenRLHF's dynamic filtering drops it — flagged; `--failed-reward none` keeps nulls with the reasons."""
    fake_server.handler = garbage
    label = {"instruction": "写一首诗", "reference": "床前明月光。"}
    async with running(settings_for(fake_server, tmp_path / "ws", None)) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:2], label))
        _, metrics = await app.get("/metrics")
    assert status == 200
    assert answer["rewards"] == [0.0, 0.0] and answer["scores"] == [0.0, 0.0]
    assert all(s.startswith("group-mean: no sample of its group was judged") for s in answer["substituted"])
    assert all("no valid reply" in f or "not valid JSON" in f or "JSON" in f for f in answer["failures"])
    logs = answer["extra_logs"]
    assert logs["howtobench/failed"] == [1.0, 1.0] and logs["howtobench/substituted"] == [1.0, 1.0]
    assert logs["howtobench/root"] == [0.0, 0.0] and logs["howtobench/present/root"] == [0.0, 0.0]
    assert not any(math.isnan(v) for values in logs.values() for v in values)
    assert 'howtobench_substituted_rewards_total{rule="all-failed"} 2.0' in metrics
    async with running(settings_for(fake_server, tmp_path / "ws", None, failed_reward=None)) as app:
        status, null, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:2], label))
    assert null["rewards"] == [None, None] and null["scores"] == [None, None] and null["substituted"] == [None] * 2


async def test_failed_reward_value_and_group_mean_are_substitutes_said_as_such(fake_server: FakeServer,
                                                                              tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    label = {"instruction": "写一篇文章", "reference": "参考。", "task": "guide"}
    body = openrlhf_body(PROMPT, RESPONSES[:3], label)
    body["query"][1] = "something else entirely"  # does not continue its prompt: cannot be split
    body["query"], body["prompts"] = [body["query"][1], body["query"][0], body["query"][2]], body["prompts"]
    async with running(settings_for(fake_server, tmp_path / "ws", None, failed_reward="group-mean")) as app:
        status, answer, _ = await app.post("/get_reward", body)
    assert status == 200
    judged = [answer["rewards"][1], answer["rewards"][2]]  # the unusable one first: it still waits for its group
    assert answer["rewards"][0] == pytest.approx(sum(judged) / 2)
    assert "does not start with its prompt" in answer["failures"][0]
    assert answer["substituted"][0].startswith("group-mean: the mean of the 2 judged sample(s)")
    assert answer["substituted"][1] is None and answer["extra_logs"]["howtobench/substituted"] == [1.0, 0.0, 0.0]
    async with running(settings_for(fake_server, tmp_path / "ws", None, failed_reward=-1.0)) as app:
        _, answer, _ = await app.post("/get_reward", body)
    assert answer["rewards"][0] == -1.0 and answer["rewards"][1] == pytest.approx(judged[0])
    assert answer["substituted"][0] == "--failed-reward -1 given in place of a failure"


async def test_a_judge_answering_401_gives_no_rewards_at_all(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = lambda request: Reply.error(401, "invalid api key sk-secret-123")
    async with running(settings_for(fake_server, tmp_path / "ws", None, failed_reward=0.0)) as app:
        status, text, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:2], ""))
    assert status == 503 and isinstance(text, str) and text.count("\n") == 1
    assert text.startswith("PermanentError: ") and "401" in text and "rewards" not in text


async def test_bad_requests_are_400_and_chat_markers_are_stripped(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", None)) as app:
        status, answer, _ = await app.post("/get_reward", {"query": ["x"]})
        assert status == 400 and answer["error"] == "prompts: Field required"
        status, answer, _ = await app.post("/get_reward", {"query": ["x"], "prompts": ["x", "y"]})
        assert status == 400 and "as long as" in answer["error"]
        # every problem at once: two unknown keys (one misspelt, with did-you-mean) and a bad value
        status, answer, _ = await app.post("/get_reward", {"query": ["x"], "prompt": ["x"], "lables": [""],
                                                           "prompts": [3]})
        assert status == 400 and answer["error"].count("; ") >= 2, answer
        assert "the body has an unknown key 'lables' (did you mean 'labels'?)" in answer["error"]
        assert "unknown key 'prompt'" in answer["error"] and "prompts.0" in answer["error"]
        for deadline in ("true", "0", '"5"'):
            body = '{"samples": [{"response": "x"}], "deadline_s": ' + deadline + "}"
            async with app.http.post(app.url + "/v1/score", data=body) as resp:
                error = (await resp.json())["error"]
                assert resp.status == 400 and error.startswith('"deadline_s" must be a positive number'), error
        status, answer, _ = await app.post("/get_reward", openrlhf_body("P", ["正文。"], "guide/nope", "<|endoftext|>"))
    assert status == 200 and answer["rewards"] == [0.0] and answer["substituted"][0].startswith("group-mean: no")
    assert "no such item" in answer["failures"][0]


async def test_health_is_503_until_the_preflight_and_degraded_when_no_judge_url_is_left(fake_server: FakeServer,
                                                                                         tmp_path: Path) -> None:
    async with running(settings_for(fake_server, tmp_path / "ws", None), ready=False) as app:
        status, text = await app.get("/health")
        assert status == 503 and "preflight" in text
        app.state.health.ready = True
        status, text = await app.get("/health")
        assert status == 200
        pool = app.state.health.pool
        assert pool is not None
        assert json.loads(text)["status"] == "ok"
        pool.circuits[0].open_until = pool.now() + 60  # the only URL left the pool: requests wait for its probe
        status, text = await app.get("/health")
    assert status == 200 and json.loads(text)["status"] == "degraded"
    assert json.loads(text)["reason"].startswith("every judge URL out of the pool")


async def test_past_max_queued_is_429_naming_the_flag_a_lone_larger_request_is_judged_in_parts(
        fake_server: FakeServer, tmp_path: Path) -> None:
    import asyncio

    fake_server.handler = server_handler()
    fake_server.latency = 0.5
    label = {"instruction": "写一篇文章", "reference": "参考。"}
    settings = settings_for(fake_server, tmp_path / "ws", None, max_queued=2, deadline_s=0.2, failed_reward=None)
    async with running(settings) as app:
        # 3 samples over a bound of 2, nothing else queued: admitted, never refused forever
        first = asyncio.ensure_future(app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:3], label)))
        while app.state.service.pending < 3:
            await asyncio.sleep(0.01)
        status, answer, resp = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[3:], label))
        assert status == 429 and int(resp.headers["Retry-After"]) >= 1
        assert "raise --max-queued" in answer["error"] and "--max-queued 2" in answer["error"]
        status, late, _ = await first
        assert status == 200 and late["rewards"] == [None] * 3
        _, metrics = await app.get("/metrics")
        assert 'howtobench_samples_total{outcome="deadline"} 3.0' in metrics
        assert "howtobench_refused_requests_total 1.0" in metrics
        assert all(f.startswith("deadline: not judged within 0.2 s") for f in late["failures"])
        while app.state.service.pending:  # the judgments go on past the deadline, into the cache
            await asyncio.sleep(0.05)
        fake_server.reset()
        status, again, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:3], label))
    assert status == 200 and None not in again["rewards"] and judge_calls(fake_server) == []


async def test_v1_score_gives_every_node_leaf_reason_and_the_names(fake_server: FakeServer, tmp_path: Path,
                                                                   bench_root: Path) -> None:
    fake_server.handler = server_handler()
    expected = await direct_rewards(fake_server, tmp_path / "direct", bench_root, RESPONSES[:1])
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        status, answer, _ = await app.post("/v1/score", {"samples": [
            {"response": RESPONSES[0], "label": GUIDE},
            {"query": PROMPT + RESPONSES[0] + "<|im_end|>", "prompt": PROMPT, "label": GUIDE},
            {"response": "正文", "label": "open/infer_99999"}], "deadline_s": 60})
        bad, _, _ = await app.post("/v1/score", {"samples": [{"label": GUIDE}]})
    assert status == 200 and bad == 400
    first, second, third = answer["results"]
    assert first["reward"] == pytest.approx(expected[0]) and second["reward"] == first["reward"]
    assert first["status"] == "ok" and set(first["nodes"]) == {"content", "format", "impression"}
    assert len(first["leaves"]) == 8 and all(leaf["reason"] for leaf in first["leaves"])
    assert sum(first["weights"].values()) == pytest.approx(2.0)  # content + format weights, each summing to 1
    assert third["reward"] == 0.0 and "no such item" in third["error"] and third["status"] == "failed"
    assert third["substituted"].startswith("group-mean: no sample of its group was judged")
    assert answer["names"][:3] == ["content", "format", "impression"] and "logic" in answer["names"]


async def test_prompt_language_reaches_the_judge(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    label = {"instruction": "写一篇文章", "reference": "参考。"}
    for language, workspace in (("zh", "zh-ws"), ("en", "en-ws")):
        fake_server.reset()
        settings = settings_for(fake_server, tmp_path / workspace, None,
                                options=judge_options(prompt_language=language))
        async with running(settings) as app:
            status, answer, _ = await app.post("/v1/score", {"samples": [{"response": RESPONSES[0], "label": label}]})
        assert status == 200 and answer["results"][0]["reward"] is not None
        systems = {m["content"] for r in judge_calls(fake_server) for m in r["messages"] if m["role"] == "system"}
        assert systems and all(any("\u4e00" <= ch <= "\u9fff" for ch in s) == (language == "zh") for s in systems)


async def test_a_completion_group_costs_1_plus_5n_and_no_reference_drops_the_reference(
        fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", bench_root)) as app:
        status, answer, _ = await app.post("/get_reward", openrlhf_body(PROMPT, RESPONSES[:3], "completion/infer_1000"))
    assert status == 200 and None not in answer["rewards"]
    assert len(judge_calls(fake_server)) == 1 + 5 * 3
    assert answer["extra_logs"]["howtobench/format"] == [0.0] * 3  # Completion has no Format: 0, and absent
    assert answer["extra_logs"]["howtobench/present/format"] == [0.0] * 3
    assert answer["extra_logs"]["howtobench/present/content"] == [1.0] * 3
    reference = next(i for i in load_items(bench_root, ["completion"]) if i.id == "infer_1000").reference
    assert any(reference[:50] in json.dumps(r["messages"], ensure_ascii=False) for r in judge_calls(fake_server))
    fake_server.reset()
    async with running(settings_for(fake_server, tmp_path / "ws-free", bench_root, no_reference=True)) as app:
        status, free, _ = await app.post("/v1/score", {"samples": [{"response": RESPONSES[0],
                                                                     "label": "completion/infer_1000"}]})
    assert status == 200 and free["results"][0]["reference"] is False
    assert not any(reference[:50] in json.dumps(r["messages"], ensure_ascii=False) for r in judge_calls(fake_server))
