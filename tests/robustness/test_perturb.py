"""Rule-based perturbations on hand-made Chinese and English texts: counts, positions, determinism."""

from __future__ import annotations

import pytest

from howtobench.judges.headings import parse_headings
from howtobench.robustness.apply import ALL_KINDS, derive_seed
from howtobench.robustness.perturb import INJECTIONS, RULES, PerturbContext, bundled_filler
from howtobench.robustness.text_units import detect_language, paragraphs, sentences

ZH_PARAS = [f"第{i}段。这是第{i}段的第二句！" for i in range(1, 7)]
ZH = "\n\n".join(ZH_PARAS)
EN_PARAS = [f"Paragraph {i} opens here. It costs 3.5 dollars! Is it {i}?" for i in range(1, 6)]
EN = "\n".join(EN_PARAS)
ZH_CTX = PerturbContext("zh", reference="参考范文。")
EN_CTX = PerturbContext("en")


def test_sentence_splitter_zh_and_en() -> None:
    assert sentences("你好。真的吗？“好吧。”是的……最后", "zh") == ["你好。", "真的吗？", "“好吧。”", "是的……", "最后"]
    assert sentences("It costs 3.5 dollars. Really? Yes", "en") == ["It costs 3.5 dollars. ", "Really? ", "Yes"]
    assert paragraphs("a\n\n\n b \n") == ["a", "b"]
    assert detect_language(ZH) == "zh" and detect_language(EN) == "en"


@pytest.mark.parametrize(("text", "ctx", "paras"), [(ZH, ZH_CTX, ZH_PARAS), (EN, EN_CTX, EN_PARAS)])
def test_drop_paragraphs(text: str, ctx: PerturbContext, paras: list[str]) -> None:
    for seed in range(20):
        out, record = RULES["drop"](text, seed, ctx)
        assert out is not None
        gone = [c["index"] for c in record.changes]
        assert 1 <= len(gone) <= 3 and all(c["unit"] == "paragraph" for c in record.changes)
        assert paragraphs(out) == [p for i, p in enumerate(paras) if i not in gone]
        assert [c["text"] for c in record.changes] == [paras[i] for i in gone]


def test_drop_sentences_when_fewer_than_four_paragraphs() -> None:
    text = "一句。二句。三句。\n四句！"
    for seed in range(20):
        out, record = RULES["drop"](text, seed, ZH_CTX)
        assert out is not None
        dropped = {c["text"] for c in record.changes}
        assert 1 <= len(dropped) <= 3 and all(c["unit"] == "sentence" for c in record.changes)
        left = [s for p in paragraphs(out) for s in sentences(p, "zh")]
        assert sorted(left + sorted(dropped)) == sorted(["一句。", "二句。", "三句。", "四句！"])
    # a single sentence is never dropped
    assert RULES["drop"]("只有一句。", 1, ZH_CTX).text == "只有一句。"


@pytest.mark.parametrize(("text", "ctx", "paras"), [(ZH, ZH_CTX, ZH_PARAS), (EN, EN_CTX, EN_PARAS)])
def test_repeat_places_copies_away_from_source(text: str, ctx: PerturbContext, paras: list[str]) -> None:
    for seed in range(20):
        out, record = RULES["repeat"](text, seed, ctx)
        assert out is not None
        result = paragraphs(out)
        assert 1 <= len(record.changes) <= 3
        assert len(result) == len(paras) + len(record.changes)
        for change in record.changes:
            assert result[change["output_index"]] == paras[change["source"]]
            assert change["gap"] not in (change["source"], change["source"] + 1)
        copies = {c["output_index"] for c in record.changes}
        assert [p for i, p in enumerate(result) if i not in copies] == paras


def test_exact_positions_are_pinned_for_a_seed() -> None:
    """Pinned values: if these change, perturbations are no longer reproducible across versions."""
    repeated = RULES["repeat"](ZH, 3, ZH_CTX)
    assert [(c["source"], c["gap"], c["output_index"]) for c in repeated.record.changes] == [(4, 6, 6)]
    assert paragraphs(repeated.text or "") == [*ZH_PARAS, ZH_PARAS[4]]
    assert [c["index"] for c in RULES["drop"](ZH, 3, ZH_CTX).record.changes] == [4]


def test_same_seed_same_output_different_seed_differs() -> None:
    for kind in ("drop", "repeat", "shuffle", "pad"):
        first = RULES[kind](ZH, 11, ZH_CTX)
        assert RULES[kind](ZH, 11, ZH_CTX) == first
        assert any(RULES[kind](ZH, s, ZH_CTX).text != first.text for s in range(12, 20)), kind


def test_derived_seed_is_order_independent_and_distinct() -> None:
    assert derive_seed(0, "infer_1", "m", "drop") == derive_seed(0, "infer_1", "m", "drop")
    seeds = {derive_seed(0, "infer_1", "m", "drop"), derive_seed(0, "infer_1", "m", "repeat"),
             derive_seed(1, "infer_1", "m", "drop"), derive_seed(0, "infer_2", "m", "drop")}
    assert len(seeds) == 4


def test_shuffle_is_a_true_permutation() -> None:
    for seed in range(10):
        out, record = RULES["shuffle"](EN, seed, EN_CTX)
        assert out is not None
        order = record.changes[0]["order"]
        assert sorted(order) == list(range(5)) and order != list(range(5))
        assert paragraphs(out) == [EN_PARAS[i] for i in order]


def test_truncate_keeps_two_thirds() -> None:
    text = "一二三四五六七八九"
    out, record = RULES["truncate"](text, 0, ZH_CTX)
    assert out == "一二三四五六"
    assert record.changes[0] == {"unit": "char", "kept_chars": 6, "removed_chars": 3}


def test_pad_appends_equal_length_off_topic_text() -> None:
    pool = ("无关的第一句。无关的第二句。", "另一篇文章的一句话。")
    out, record = RULES["pad"](ZH, 5, PerturbContext("zh", pool=pool))
    assert out is not None and out.startswith(ZH)
    change = record.changes[0]
    assert change["pool"] == "given" and change["target_chars"] == len(ZH)
    # whole sentences up to the target: within one sentence of the original length
    assert len(ZH) - 10 <= change["filler_chars"] <= len(ZH)
    extra = paragraphs(out)[len(ZH_PARAS):]
    assert sum(map(len, extra)) == change["filler_chars"]
    assert all(s in "".join(pool) for p in extra for s in sentences(p, "zh"))


def test_pad_uses_bundled_filler_in_each_language() -> None:
    for text, ctx in ((ZH, ZH_CTX), (EN, EN_CTX)):
        out, record = RULES["pad"](text, 2, ctx)
        assert out is not None and record.changes[0]["pool"] == "bundled"
        filler = "\n".join(paragraphs(out)[len(paragraphs(text)):])
        assert detect_language(filler) == ctx.language
        first = sentences(filler.split("\n")[0], ctx.language)
        assert any(s.strip() in " ".join(bundled_filler(ctx.language)) for s in first)


@pytest.mark.parametrize(("position", "index"), [("start", 0), ("middle", 3), ("end", 6)])
def test_inject_zh_positions(position: str, index: int) -> None:
    out, record = RULES[f"inject-{position}"](ZH, 0, ZH_CTX)
    assert out is not None
    result = paragraphs(out)
    assert result[index] == INJECTIONS["zh"] and len(result) == 7
    assert [p for p in result if p != INJECTIONS["zh"]] == ZH_PARAS
    assert record.changes[0]["gap"] == index


def test_inject_en_middle_of_five() -> None:
    out, _ = RULES["inject-middle"](EN, 0, EN_CTX)
    assert out is not None and paragraphs(out)[3] == INJECTIONS["en"]
    assert "full marks" in INJECTIONS["en"] and "满分" in INJECTIONS["zh"]


def test_strip_headings_leaves_no_heading_for_the_parser() -> None:
    text = "# 标题\n\n一、背景\n正文一句。\n（二）细节\n\n- 要点\n2. 第二条\n##\nPlain line."
    assert parse_headings(text)["subtopics"]
    out, record = RULES["strip-headings"](text, 0, ZH_CTX)
    assert out is not None
    assert parse_headings(out)["subtopics"] == []
    assert paragraphs(out) == ["标题", "背景", "正文一句。", "细节", "要点", "第二条", "Plain line."]
    assert [c["markers"] for c in record.changes] == [["#"], ["一、"], ["（二）"], ["-"], ["2."], ["##"]]
    assert [c["removed_line"] for c in record.changes] == [False] * 5 + [True]


def test_reference_control_and_missing_reference() -> None:
    assert RULES["reference"](ZH, 0, ZH_CTX).text == "参考范文。"
    missing = RULES["reference"](ZH, 0, EN_CTX)
    assert missing.text is None and missing.record.status == "failed"


def test_registry_lists_every_kind() -> None:
    assert set(ALL_KINDS) >= {"drop", "repeat", "shuffle", "truncate", "pad", "inject-start", "inject-middle",
                              "inject-end", "strip-headings", "reference", "transfer-comment", "transfer-letter",
                              "transfer-official", "transfer-poem"}
