"""Request bodies read strictly (issue 34, item 9): a 100,000-deep body, NaN / Infinity, a number that overflows and
a boolean where seconds belong are one 400 naming what is wrong — no 500, no RecursionError, nothing judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_server import FakeServer
from howtobench import strict_json
from judge_replies import server_handler
from reward_serving import running, settings_for

SAMPLE = '{"response": "正文。", "label": {"instruction": "写一篇文章"}}'


@pytest.mark.parametrize(("body", "said"), [
    ("[" * 100_000 + "]" * 100_000, "the body is not JSON: nested deeper than 64 levels"),
    ('{"samples": [' + SAMPLE + '], "deadline_s": NaN}', "the body is not JSON: NaN is not JSON"),
    ('{"samples": [' + SAMPLE + '], "deadline_s": Infinity}', "the body is not JSON: Infinity is not JSON"),
    ('{"samples": [' + SAMPLE + '], "deadline_s": 1e999}', "the body is not JSON: the number 1e999 is too large"),
    ('{"samples": [' + SAMPLE + '], "deadline_s": true}', '"deadline_s" must be a positive number of seconds, not '
                                                          'true'),
    ('{"samples": [' + SAMPLE + '], "deadline_s": -1}', '"deadline_s" must be a positive number of seconds, not -1'),
    (b'{"samples": [], "x": "\xff"}', "the body is not JSON: not UTF-8 text (byte 0xff at offset 22)"),
])
async def test_a_malformed_body_is_one_400_naming_the_problem(body: str | bytes, said: str,
                                                              fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", None)) as app:
        async with app.http.post(app.url + "/v1/score", data=body) as resp:
            answer = await resp.json()
            assert resp.status == 400, answer
        assert answer["error"].startswith(said), answer
        async with app.http.post(app.url + "/get_reward", data=body) as resp:
            assert resp.status == 400
    assert fake_server.requests == []


def test_strict_json_takes_what_json_allows() -> None:
    assert strict_json.loads('{"a": [1, 2.5, -3e2, true, null, "NaN"]}') == {"a": [1, 2.5, -300.0, True, None, "NaN"]}
    assert strict_json.loads(b'[[[[1]]]]', max_depth=4) == [[[[1]]]]
    with pytest.raises(ValueError, match="nested deeper than 3 levels"):
        strict_json.loads("[[[[1]]]]", max_depth=3)
    assert strict_json.is_number(3) and strict_json.is_number(0.5)
    assert not any(strict_json.is_number(v) for v in (True, float("nan"), float("inf"), "1"))


async def test_a_request_larger_than_ever_admitted_is_judged_in_parts_never_refused(fake_server: FakeServer,
                                                                                  tmp_path: Path) -> None:
    """Issue 34, item 8 (and issue 33): more samples than the server's bound on an idle server was a 429 forever
    (the bundled adapter retried it for 600 s); alone, it is admitted whole and judged in parts as the judge takes
    them."""
    from howtobench.rl.scorers import RemoteScorer
    from reward_serving import judge_calls, openrlhf_body

    fake_server.handler = server_handler()
    label = {"instruction": "写一篇文章", "reference": "参考。"}
    async with running(settings_for(fake_server, tmp_path / "ws", None, max_queued=3)) as app:
        four = openrlhf_body("P", ["一。", "二。", "三。", "四。"], label)
        status, answer, _ = await app.post("/get_reward", four)
        assert status == 200 and None not in answer["rewards"] and answer["substituted"] == [None] * 4
        scorer = RemoteScorer(app.url)
        scored = await scorer.score([{"response": f"第{k}篇。", "label": label} for k in range(5)])
        await scorer.close()
    assert [r["substituted"] for r in scored["results"]] == [None] * 5
    assert len(judge_calls(fake_server)) == 1 + 7 * 9


@pytest.mark.parametrize(("body", "said"), [
    ('{"samples": [' + SAMPLE + '], "deadline": 5}',
     "the body has an unknown key 'deadline' (did you mean 'deadline_s'?); known: samples, deadline_s"),
    ('{"samples": [{"response": "正文。", "lable": "guide/infer_354"}]}',
     "samples.0 has an unknown key 'lable' (did you mean 'label'?); known: response, query, prompt, label"),
])
async def test_an_unknown_key_in_a_score_body_is_a_400_with_did_you_mean(body: str, said: str,
                                                                         fake_server: FakeServer,
                                                                         tmp_path: Path) -> None:
    """A typo (`deadline`) was silently ignored: the request waited the server's default instead."""
    fake_server.handler = server_handler()
    async with running(settings_for(fake_server, tmp_path / "ws", None)) as app, \
            app.http.post(app.url + "/v1/score", data=body) as resp:
        assert resp.status == 400 and (await resp.json())["error"] == said
    assert fake_server.requests == []
