"""`--judge-option KEY=VALUE` (issue 36 point 2): any option a method's signature declares, checked and converted
by the method, refused when set twice; every judgment records the options its judge was built with."""

from __future__ import annotations

import json

import pytest

from fake_clients import FakeClient, reply
from howtobench.cli.judge_flags import Judging
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import build_judge, method_info
from howtobench.judges.options import parse_judge_options, with_judge_options
from howtobench.judges.runner import failed_judgment

ITEM = Item(infer_id="i1", task_type="guide", basic_instruction="写", reference="春天来了。")
WRITING = Writing(infer_id="i1", model="m", output="春天到了。")


def test_the_method_converts_each_option_to_the_type_its_signature_annotates() -> None:
    tow = method_info("tow")
    assert tow.convert_options({"samples": "3", "with_reference": "false", "tree": "debiased"}) == {
        "samples": 3, "with_reference": False, "tree": "debiased"}
    with pytest.raises(JudgeError, match=r"^--judge-option samples=many: Input should be a valid integer"):
        tow.convert_options({"samples": "many"})
    with pytest.raises(JudgeError, match=r"does not take the options \['depth'\]"):
        tow.convert_options({"depth": "2"})


def test_pairs_are_key_value_and_a_key_is_given_once() -> None:
    assert parse_judge_options(["samples=3", "tree=a=b.yaml"]) == {"samples": "3", "tree": "a=b.yaml"}
    assert parse_judge_options("samples=3") == {"samples": "3"} and parse_judge_options(None) == {}
    with pytest.raises(JudgeError, match="give KEY=VALUE"):
        parse_judge_options(["samples"])
    with pytest.raises(JudgeError, match="samples is given twice"):
        parse_judge_options(["samples=2", "samples=3"])
    with pytest.raises(JudgeError, match="samples is also set by the command's own flag"):
        with_judge_options("tow", {"samples": 2}, {"samples": "3"})


def test_the_judge_flags_and_judge_options_make_one_set() -> None:
    assert Judging(judge_option=["samples=2"]).options("tow") == {"prompt_language": "en", "samples": 2}
    assert Judging(judge_option=["prompt_language=zh"]).options("tow") == {"prompt_language": "zh"}
    assert Judging(samples=2).options("tow") == {"prompt_language": "en", "samples": 2}
    with pytest.raises(JudgeError, match="samples is also set"):
        Judging(samples=2, judge_option=["samples=3"]).options("tow")


async def test_every_judgment_records_the_options_its_judge_was_built_with() -> None:
    pytest.importorskip("jieba", reason="the [metrics] extra installs jieba")
    bleu = build_judge("bleu", None, {})
    judged = await bleu.judge(ITEM, WRITING)
    assert judged.judge_options == {} and "judge_options" not in json.loads(judged.model_dump_json())
    single = build_judge("single", FakeClient(lambda request: reply()), {"samples": 2, "prompt_language": "en"})
    failed = failed_judgment(single, ITEM, WRITING, RuntimeError("x"))
    assert failed.judge_options == {"samples": 2, "prompt_language": "en"}
    assert json.loads(failed.model_dump_json())["judge_options"] == {"samples": 2, "prompt_language": "en"}
    assert single.method == "single" and single.samples == 2  # the judge's own attributes read through
