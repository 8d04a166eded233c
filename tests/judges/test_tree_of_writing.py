"""The ToW judge end to end over the fake server: formulas, shared weights, failures, empty, reference-free."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tow_fakes import GUIDE_WEIGHTS, fake_client, leaf_of, schema_name, tow_handler

from fake_server import FakeServer, Reply
from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.judges.base import JUDGES
from howtobench.judges.runner import run_judge
from howtobench.judges.tree import LEAF_KINDS, TREES_DIR, LeafKind, default_tree, load_tree, register_leaf_kind
from howtobench.judges.tree_of_writing import TreeOfWriting

REFERENCE = "参考范文第一段。\n\n参考范文第二段，独有句子：落霞与孤鹜齐飞。"
WRITING = "第一段正文。\n\n第二段正文。"
GUIDE_ROOT = (4 * 6.9 + 3 * 8.5 + 7) / 8  # content 6.9, format 0.5*10 + 0.3*5 + 0.2*10, impression 7


def item(k: int = 0, task: str = "guide", reference: str = REFERENCE) -> Item:
    return Item(infer_id=f"i{k}", task_type=task, basic_instruction=f"写第{k}篇", reference=reference, genre="essay")


def writing(k: int = 0, model: str = "m1", text: str = WRITING) -> Writing:
    return Writing(infer_id=f"i{k}", model=model, output=text)


def leaf_requests(server: FakeServer) -> list:
    return [r for r in server.requests if schema_name(r) == "leaf_score"]


async def test_guide_judgment_matches_hand_computation(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing())
    assert judgment.status == "ok" and judgment.failures == []
    assert judgment.score == pytest.approx(GUIDE_ROOT)
    assert judgment.nodes == pytest.approx({"content": 6.9, "format": 8.5, "impression": 7.0})
    leaves = {x.name: x for x in judgment.leaves}
    assert leaves["paragraphing"].raw_score == 2 and leaves["paragraphing"].score == 5.0
    assert leaves["formatting"].score == 10.0 and leaves["formatting"].cache_key is None
    assert judgment.weights == {**GUIDE_WEIGHTS["content"], **GUIDE_WEIGHTS["format"]}
    assert judgment.judge_model == "fake-judge" and judgment.tree_hash == default_tree().hash
    assert judgment.reference_source == "human"
    assert len(judgment.cache_keys) == 8  # 7 LLM leaves + 1 weights call
    assert judgment.usage.calls == 8
    assert len(leaf_requests(fake_server)) == 7


async def test_completion_has_content_and_impression_only(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client).judge(item(task="completion"), writing())
    assert judgment.score == pytest.approx((4 * 6.9 + 7) / 5)
    assert set(judgment.nodes) == {"content", "impression"}
    assert {x.name for x in judgment.leaves} == {"opening_ending", "language", "logic", "emotion", "impression"}


async def test_leaf_prompts_of_one_writing_share_their_prefix(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        await TreeOfWriting(client).judge(item(), writing())
    users = [r["messages"][-1]["content"] for r in leaf_requests(fake_server)]
    prefixes = {u[: u.index("<<<END WRITING>>>")] for u in users}
    assert len(prefixes) == 2 and len(set(users)) == 7  # paragraphing alone sees no reference (the authors')
    assert len({u[: u.index("<<<REFERENCE>>>")] for u in users if "<<<REFERENCE>>>" in u}) == 1
    assert sum("<<<REFERENCE>>>" not in u for u in users) == 1
    assert len({r["messages"][0]["content"] for r in leaf_requests(fake_server)}) == 1


async def test_weight_calls_equal_instructions_not_writings(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    models = ("m1", "m2", "m3", "m4")
    pairs = [(item(k), writing(k, model=m, text=f"{m} 写的。\n\n正文。")) for k in range(3) for m in models]
    async with fake_client(fake_server, tmp_path) as client:
        judgments = await run_judge(TreeOfWriting(client), pairs, tmp_path / "out.jsonl", progress=False)
    assert len([r for r in fake_server.requests if schema_name(r) == "weights"]) == 3
    assert len(leaf_requests(fake_server)) == 12 * 7
    assert all(j.score == pytest.approx(GUIDE_ROOT) for j in judgments)
    assert sum(not j.meta["weights_shared"] for j in judgments) == 3
    assert sum(j.usage.calls for j in judgments) == 3 + 12 * 7


async def test_failed_leaf_is_recorded_and_root_withheld(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler(scores={"logic": Reply.text("I refuse to give JSON")})
    async with fake_client(fake_server, tmp_path, reasks=0) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing())
        renormalized = await TreeOfWriting(client, renormalize=True).judge(item(), writing())
    logic = next(x for x in judgment.leaves if x.name == "logic")
    assert logic.status == "failed" and logic.score is None and logic.raw_text == "I refuse to give JSON"
    assert judgment.status == "failed" and judgment.score is None and judgment.nodes["content"] is None
    assert any(f.startswith("leaf logic:") for f in judgment.failures)
    content = (0.4 * 8 + 0.3 * 6 + 0.1 * 5) / 0.8
    assert renormalized.status == "renormalized"
    assert renormalized.score == pytest.approx((3 * content + 3 * 8.5 + 7) / 7)


async def test_out_of_scale_score_fails_the_leaf(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler(scores={"impression": Reply.json({"analysis": "x", "score": 42})})
    async with fake_client(fake_server, tmp_path, reasks=0) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing())
    impression = next(x for x in judgment.leaves if x.name == "impression")
    assert impression.status == "failed" and impression.score is None and judgment.score is None


async def test_failed_weights_mean_no_root(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler(weights=lambda _: Reply.text("no"))
    async with fake_client(fake_server, tmp_path, reasks=0) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing())
    assert judgment.status == "failed" and judgment.score is None and judgment.weights == {}
    assert any(f.startswith("weights:") for f in judgment.failures)
    assert all(x.status == "ok" for x in judgment.leaves)  # leaf scores are still kept


async def test_empty_writing_gets_lowest_scores_without_calls(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing(text="  \n "))
    assert fake_server.requests == []
    assert judgment.status == "empty" and judgment.score == pytest.approx((4 * 1 + 3 * 0 + 1) / 8)
    assert all(x.status == "empty" for x in judgment.leaves)
    assert {x.name: x.score for x in judgment.leaves}["paragraphing"] == 0.0


async def test_reference_free_sends_no_reference(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    headed = "# 标题\n## 一\n正文\n## 二\n正文"
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client, with_reference=False).judge(item(), writing(text=headed))
    bodies = [str(r["messages"]) for r in fake_server.requests]
    assert bodies and not any("落霞与孤鹜" in b or "参考范文" in b for b in bodies)
    assert judgment.meta["reference"] is False and judgment.reference_source is None  # read none: says so
    # formatting judges the writing's own headings (section 3.2): consistent -> 10, reference or not
    assert next(x for x in judgment.leaves if x.name == "formatting").score == 10.0


async def test_a_yaml_only_extra_leaf_is_judged(fake_server: FakeServer, tmp_path: Path) -> None:
    spec = yaml.safe_load((TREES_DIR / "default.yaml").read_text(encoding="utf-8"))
    spec["nodes"][0]["leaves"].append({
        "id": "examples", "label": {"zh": "举例", "en": "Use of examples"}, "kind": "llm-rubric",
        "scale": list(range(1, 11)), "criteria": {"zh": "例子是否贴切。", "en": "Are examples apt?"},
    })
    path = tmp_path / "tree.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    tree = load_tree(path)
    weights = {"content": {"opening_ending": 0.2, "language": 0.2, "logic": 0.2, "emotion": 0.2, "examples": 0.2}}
    fake_server.handler = tow_handler(weights=weights, scores={"examples": 9}, tree=tree)
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client, tree=path).judge(item(task="completion"), writing())
    content = 0.2 * (8 + 6 + 7 + 5 + 9)
    assert judgment.nodes["content"] == pytest.approx(content)
    assert judgment.score == pytest.approx((5 * content + 7) / 6)
    assert "examples" in {leaf_of(r, tree) for r in leaf_requests(fake_server)}


async def test_weight_samples_are_shared_and_averaged(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        judge = TreeOfWriting(client, samples=3)
        first = await judge.judge(item(), writing(model="m1"))
        second = await judge.judge(item(), writing(model="m2"))
    assert len([r for r in fake_server.requests if schema_name(r) == "weights"]) == 3
    assert [s.index for s in first.samples] == [0, 1, 2] and len(second.samples) == 3
    assert first.score == pytest.approx(GUIDE_ROOT) and len(first.meta["sample_weights"]) == 3


LANGUAGE_MARKS = {
    "en": {"system": "You are a professional writing reviewer.\n", "anchor": "fixed at 6 points",
           "criterion": "[Criterion:", "fixed_8": "fixed at 8", "ending_5th": "without length or repetition"},
    "zh": {"system": "你是一名专业的写作评审。\n", "anchor": "参考范文固定为 6 分", "criterion": "【评审项目：",
           "fixed_8": "固定为 8", "ending_5th": "避免冗长和重复"},
}


@pytest.mark.parametrize("language", [None, "zh"])
async def test_requests_carry_the_authors_criteria_anchor_schema_and_budget(
    fake_server: FakeServer, tmp_path: Path, language: str | None
) -> None:
    """What the judge model receives: every line of each leaf's criteria and bands in the prompt language (English
    by default, as the authors' prompts), the reference fixed at 6 on the anchored leaves (logic too: section B.3,
    not the authors' 8), enum schemas without a length cap, temperature 0 and the authors' 4,096-token budget on
    every call, one system prompt."""
    fake_server.handler = tow_handler()
    options = {} if language is None else {"prompt_language": language}
    lang = language or "en"
    marks = LANGUAGE_MARKS[lang]
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client, **options).judge(item(), writing())
    assert judgment.prompt_language == lang and judgment.meta["language"] == "zh"
    tree = default_tree()
    leaves = {leaf.id: leaf for leaf in tree.leaves_for("guide")}
    by_leaf = {leaf_of(r, tree): r for r in leaf_requests(fake_server)}
    assert set(by_leaf) == {i for i, leaf in leaves.items() if leaf.is_llm}
    assert {r["messages"][0]["content"] for r in fake_server.requests if r["messages"][0]["role"] == "system"} == {
        marks["system"]}
    for leaf_id, request in by_leaf.items():
        leaf, user = leaves[leaf_id], request["messages"][-1]["content"]
        assert (request["max_tokens"], request["temperature"]) == (4096, 0.0)
        schema = request["response_format"]["json_schema"]["schema"]
        assert set(schema["properties"]) == {"analysis", "score"} and set(schema["required"]) == {"analysis", "score"}
        assert schema["properties"]["analysis"] == {"type": "string"}
        assert schema["properties"]["score"]["enum"] == list(leaf.scale)
        assert all(line in user for line in leaf.criteria.get(lang).splitlines())
        assert all(band.get(lang) in user for band in leaf.bands)
        assert (marks["anchor"] in user) == (leaf.reference == "anchor"), leaf_id
        assert ("落霞与孤鹜齐飞" in user) == (leaf.reference != "hidden"), leaf_id
        assert user.index("<<<END WRITING>>>") < user.index(marks["criterion"])  # criteria last
    assert marks["fixed_8"] not in by_leaf["logic"]["messages"][-1]["content"]
    assert marks["ending_5th"] in by_leaf["opening_ending"]["messages"][-1]["content"]  # the ending's 5th question
    [weights] = [r for r in fake_server.requests if schema_name(r) == "weights"]
    assert (weights["max_tokens"], weights["temperature"]) == (4096, 0.0)
    assert list(weights["response_format"]["json_schema"]["schema"]["properties"]) == [
        "content", "format", "explanation"]
    assert judgment.leaves[0].reason == "ok"  # the analysis is kept as the leaf's reason


@pytest.mark.parametrize(("plots", "step"), [(1, 0), (3, 0), (4, 5), (6, 5), (7, 5), (8, 10), (10, 10)])
async def test_plots_is_asked_1_to_10_and_stepped(fake_server: FakeServer, tmp_path: Path, plots: int,
                                                   step: int) -> None:
    """A writing as good as the reference (6) gets 5 on plots, as in the authors' _to_step."""
    fake_server.handler = tow_handler(scores={"plots": plots})
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client).judge(item(), writing())
    leaf = next(x for x in judgment.leaves if x.name == "plots")
    assert (leaf.raw_score, leaf.score) == (plots, step)
    fmt = 0.5 * step + 0.3 * 5 + 0.2 * 10
    assert judgment.nodes["format"] == pytest.approx(fmt)
    assert judgment.score == pytest.approx((4 * 6.9 + 3 * fmt + 7) / 8)


async def test_analysis_cap_is_an_explicit_option(fake_server: FakeServer, tmp_path: Path) -> None:
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        await TreeOfWriting(client, analysis_max_chars=60).judge(item(), writing())
    for request in fake_server.requests:
        properties = request["response_format"]["json_schema"]["schema"]["properties"]
        field = "analysis" if "analysis" in properties else "explanation"
        assert properties[field] == {"type": "string", "maxLength": 60}


def test_registered_as_tow() -> None:
    assert "tow" in JUDGES


async def test_a_run_level_error_in_one_leaf_cancels_the_other_calls_and_writes_no_row(tmp_path: Path) -> None:
    from fake_clients import HANG, FakeClient
    from howtobench.errors import Unreachable

    def behave(request):  # type: ignore[no-untyped-def]
        return Unreachable("http://judge/v1: nothing answers") if request.purpose == "leaf:logic" else HANG

    client = FakeClient(behave)
    out = tmp_path / "tow.jsonl"
    with pytest.raises(Unreachable, match="nothing answers"):
        await run_judge(TreeOfWriting(client), [(item(), writing())], out, progress=False)
    assert len(client.calls) == 8  # the weights call and 7 LLM leaves ...
    assert client.cancelled == 7  # ... every one but the failing leaf was cancelled, none left running
    assert not out.exists() or out.read_text() == ""


async def test_leaf_calls_start_with_the_shared_prefix_and_end_with_the_hidden_reference(tmp_path: Path) -> None:
    from fake_clients import FakeClient, reply
    from howtobench.judges.tree_of_writing import dispatch_order

    tree = default_tree()
    leaves = tree.leaves_for("guide")
    order = [leaves[k].id for k in dispatch_order(leaves)]
    hidden = [leaf.id for leaf in leaves if leaf.reference == "hidden"]
    assert hidden and order[-len(hidden):] == hidden and sorted(order) == sorted(x.id for x in leaves)

    def behave(request):  # type: ignore[no-untyped-def]
        if request.purpose == "weights":
            return reply(data=GUIDE_WEIGHTS)
        return reply(data={"analysis": "a", "score": 5})

    client = FakeClient(behave, delay=0.0)
    judgment = await TreeOfWriting(client, reasks=0).judge(item(), writing())
    leaf_calls = [r.purpose.removeprefix("leaf:") for r in client.calls if r.purpose.startswith("leaf:")]
    assert leaf_calls == [leaves[k].id for k in dispatch_order(leaves) if leaves[k].is_llm]
    hidden_llm = [leaf.id for leaf in leaves if leaf.reference == "hidden" and leaf.is_llm]
    assert hidden_llm == ["paragraphing"] and leaf_calls[-1] == "paragraphing"
    assert [x.name for x in judgment.leaves] == [leaf.id for leaf in leaves]  # the record keeps the tree's order


AUTHORS_ORDER = {"opening_ending": ["analysis", "score"], "language": ["analysis", "score"],
                 "logic": ["score", "analysis"], "emotion": ["score", "analysis"], "plots": ["score", "analysis"],
                 "paragraphing": ["score", "analysis"], "impression": ["score", "analysis"]}


@pytest.mark.parametrize("tree_name", ["default", "analysis-first"])
async def test_each_leaf_asks_for_its_reply_in_the_authors_order(fake_server: FakeServer, tmp_path: Path,
                                                                 tree_name: str) -> None:
    """prompts.yaml asks for the comparative analysis first only on opening/ending and language; logic, emotion and
    plots ask for `Score: [[X]]` alone, paragraphing and impression for "Overall score: [[X]]. Reason...". The
    schema's property order is what a constrained server decodes first; `--tree analysis-first` is the option."""
    fake_server.handler = tow_handler()
    tree = load_tree(tree_name)
    async with fake_client(fake_server, tmp_path) as client:
        judgment = await TreeOfWriting(client, tree=tree).judge(item(), writing())
    assert judgment.status == "ok"
    expected = AUTHORS_ORDER if tree_name == "default" else {k: ["analysis", "score"] for k in AUTHORS_ORDER}
    for request in leaf_requests(fake_server):
        leaf = leaf_of(request, tree)
        schema = request["response_format"]["json_schema"]["schema"]
        assert list(schema["properties"]) == expected[leaf] == schema["required"], leaf
        user = request["messages"][-1]["content"]
        said = "the score first" if expected[leaf][0] == "score" else "the analysis first"
        assert said in user and ("1. Analysis:" in user) == (expected[leaf][0] == "analysis" and leaf != "impression"
                                                             and leaf != "paragraphing"), leaf


async def test_logic_weighs_each_poor_performance_and_the_reference_is_introduced_plainly(
    fake_server: FakeServer, tmp_path: Path
) -> None:
    """The authors give each poor performance of logic its own deduction (argument: 3+, speech and application:
    3-6 from their 8, the 3-4 band below our 6); their prompts label the reference plainly, with no author."""
    fake_server.handler = tow_handler()
    async with fake_client(fake_server, tmp_path) as client:
        await TreeOfWriting(client).judge(item(), writing())
    by_leaf = {leaf_of(r, default_tree()): r["messages"][-1]["content"] for r in leaf_requests(fake_server)}
    logic = by_leaf["logic"]
    assert "opinions listed without reasoning: deduct at least 2 (4 or lower)" in logic
    assert logic.count(": deduct 2-3 (3-4).") == 2 and "serious problems" not in logic
    assert "- 1-2: three or more minor weaknesses, or one significant logical problem\n" in logic
    for user in by_leaf.values():
        assert "professional author" not in user.split("[Criterion:")[0]
        assert ("[Reference writing]\n<<<REFERENCE>>>" in user) != ("<<<REFERENCE>>>" not in user)


async def test_a_registered_leaf_kind_is_scored_by_its_own_code_without_a_call(
    fake_server: FakeServer, tmp_path: Path
) -> None:
    """Leaf scorer kinds register like judge methods (issue 25 point 2): a deterministic kind added with
    `register_leaf_kind` is usable from YAML, scored by its function, and never sent to the judge model."""
    register_leaf_kind(LeafKind("count-paragraphs", score=lambda text: (min(10, text.count("\n\n") + 1), "paras")))
    try:
        spec = yaml.safe_load((TREES_DIR / "default.yaml").read_text(encoding="utf-8"))
        spec["nodes"][0]["leaves"].append({
            "id": "paras", "label": {"zh": "段落数", "en": "Paragraph count"}, "kind": "count-paragraphs",
            "scale": list(range(1, 11)), "criteria": {"zh": "段落数。", "en": "How many paragraphs."},
        })
        path = tmp_path / "tree.yaml"
        path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
        tree = load_tree(path)
        weights = {"content": {"opening_ending": 0.2, "language": 0.2, "logic": 0.2, "emotion": 0.2, "paras": 0.2}}
        fake_server.handler = tow_handler(weights=weights, tree=tree)
        async with fake_client(fake_server, tmp_path) as client:
            judgment = await TreeOfWriting(client, tree=path).judge(item(task="completion"), writing(text="甲\n\n乙"))
        paras = next(leaf for leaf in judgment.leaves if leaf.name == "paras")
        assert (paras.raw_score, paras.score, paras.reason) == (2, 2.0, "paras")
        assert "paras" not in {leaf_of(r, tree) for r in leaf_requests(fake_server)}
        spec["nodes"][0]["leaves"][-1]["kind"] = "count-paragraph"
        path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
        with pytest.raises(JudgeError, match="unknown scorer kind of leaf paras: 'count-paragraph' \\(did you mean"):
            load_tree(path)
    finally:
        LEAF_KINDS.pop("count-paragraphs")
