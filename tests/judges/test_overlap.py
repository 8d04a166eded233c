"""Overlap metrics: hand-computed BLEU-1 / ROUGE-L, bit-parallel LCS, equality with rouge-chinese on the release."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("jieba", reason="the [metrics] extra installs jieba")
pytest.importorskip("sacrebleu", reason="the [metrics] extra installs sacrebleu")
pytest.importorskip("rouge_chinese", reason="the [dev] extra installs rouge-chinese (the reference ROUGE-L)")

import jieba
import sacrebleu
from rouge_chinese import Rouge

from howtobench.data.loader import load_items, load_release_writings
from howtobench.data.models import Item, Writing
from howtobench.judges.base import JUDGES
from howtobench.judges.overlap import OverlapJudge, corpus_sacrebleu_by_model, score_overlap
from howtobench.judges.overlap_metrics import (
    LcsIndex,
    bleu1,
    rouge_l,
    sacrebleu_corpus,
    sacrebleu_sentence,
    split_sentences,
    tokenize,
)

ZH_CAND = "春天来了，花开了。"  # jieba: 春天 来 了 ， 花开 了 。
ZH_REF = "春天到了，花都开了。"  # jieba: 春天 到 了 ， 花都 开 了 。
EN_CAND = "The cat sat on the mat."
EN_REF = "the cat is on the mat."


def _item(reference: str, language: str = "zh", item_id: str = "i1") -> Item:
    return Item(infer_id=item_id, task_type="guide", basic_instruction="写", reference=reference, language=language)


def _rouge_chinese_f(hyp: str, ref: str) -> float:
    scores = Rouge(metrics=["rouge-l"]).get_scores(" ".join(jieba.lcut(hyp)), " ".join(jieba.lcut(ref)))
    return float(scores[0]["rouge-l"]["f"])


def test_chinese_bleu1_is_clipped_unigram_precision() -> None:
    cand, ref = tokenize(ZH_CAND), tokenize(ZH_REF)
    assert cand.bleu == ("春天", "来", "了", "，", "花开", "了", "。")
    # matches: 春天 1, 了 2 (clipped at the reference's 2), ， 1, 。 1 -> 5 of 7 candidate tokens
    assert bleu1(cand.bleu, ref.bleu) == 100 * round(5 / 7, 6)
    assert bleu1(tokenize("北京北京北京").bleu, tokenize("北京欢迎你").bleu) == 100 * round(1 / 3, 6)
    assert bleu1((), ref.bleu) == 0.0
    assert bleu1(cand.bleu, ()) == 0.0  # the authors: 0 when either side has no token


def test_bleu1_keeps_whitespace_tokens_like_the_authors() -> None:
    """jieba yields " " and "\n" tokens; the authors count them, clipped like any other token."""
    cand = tokenize("春天 来了\n\n花开了。")
    assert cand.bleu == ("春天", " ", "来", "了", "\n", "\n", "花开", "了", "。")
    ref = tokenize("春天到了，\n花都开了。")  # 春天 到 了 ， \n 花都 开 了 。
    # matches: 春天 1, 了 2 (ref has 2), \n 1 (clipped: ref has 1), 。 1; " " and 来 and 花开 unmatched -> 5 / 9
    assert bleu1(cand.bleu, ref.bleu) == 100 * round(5 / 9, 6) == pytest.approx(55.5556)
    # hand-made token sequences: whitespace matches whitespace, and clipping applies to it
    assert bleu1((" ", " ", " ", "a"), (" ", "a", "b")) == 100 * round(2 / 4, 6)
    assert bleu1(("\n",) * 3, ("\n", "\n")) == 100 * round(2 / 3, 6) == pytest.approx(66.6667)
    assert bleu1(("x",) * 7, ("x",)) == 100 * round(1 / 7, 6) == pytest.approx(14.2857)  # 6 decimals, 0-1 scale


def _authors_bleu1(hypothesis: str, reference: str) -> float:
    """The authors' definition (compute_bleu, n = 1) restated independently of our code: raw jieba tokens,
    a per-token loop clipping matches against the reference's counts, 6 decimals, 0-1 scale."""
    hyp, ref = list(jieba.cut(hypothesis)), list(jieba.cut(reference))
    if not hyp or not ref:
        return 0.0
    left: dict[str, int] = {}
    for token in ref:
        left[token] = left.get(token, 0) + 1
    matches = 0
    for token in hyp:
        if left.get(token, 0) > 0:
            matches, left[token] = matches + 1, left[token] - 1
    return round(matches / len(hyp), 6)


def test_bleu1_equals_the_authors_on_a_stratified_release_sample(bench_root: Path) -> None:
    """Two writings per (task, model), 60 in all; bench/bleu_fidelity.py checks all 12,969 the same way."""
    items = {it.id: it for it in load_items(bench_root)}
    writings = [w for w in load_release_writings(bench_root, items=list(items.values())) if not w.is_empty]
    rng = random.Random(14)
    strata: dict[tuple[str, str], list[Writing]] = {}
    for w in writings:
        strata.setdefault((items[w.item_id].task, w.model), []).append(w)
    sample = [w for key in sorted(strata) for w in rng.sample(strata[key], 2)]
    assert len(sample) == 60
    pairs = [(items[w.item_id], w) for w in sample]
    ours = score_overlap(pairs, methods=("bleu",))["bleu"]
    for (item, writing), judgment in zip(pairs, ours, strict=True):
        assert judgment.score is not None
        assert abs(judgment.score / 100 - _authors_bleu1(writing.output, item.reference)) <= 1e-9


def test_chinese_rouge_l_hand_computed() -> None:
    result = rouge_l(tokenize(ZH_CAND).rouge, tokenize(ZH_REF).rouge)
    assert result.lcs == 5  # 春天 了 ， 了 。
    assert (result.p, result.r) == (5 / 7, 5 / 8)
    assert result.f == pytest.approx(2 / 3, abs=1e-7)
    assert result.f == _rouge_chinese_f(ZH_CAND, ZH_REF)


def test_english_uses_lowercased_13a_words() -> None:
    cand, ref = tokenize(EN_CAND, "en"), tokenize(EN_REF, "en")
    assert cand.bleu == ("the", "cat", "sat", "on", "the", "mat", ".")
    assert bleu1(cand.bleu, ref.bleu) == pytest.approx(100 * 6 / 7)
    result = rouge_l(cand.rouge, ref.rouge)
    assert result.lcs == 6
    assert result.f == pytest.approx(6 / 7, abs=1e-7)


@pytest.mark.parametrize(
    ("hyp", "ref"),
    [
        ("我爱北京。\n\n  天安门……abc 3.5.......好！”他说？ 嗯", "北京。 \n 我爱天安门！！“好”？.......嗯"),
        ("你好 ", "你好\t世界……………"),
        ("。", "。 "),
    ],
)
def test_rouge_keeps_rouge_chinese_quirks(hyp: str, ref: str) -> None:
    """Whitespace-only 'sentences' become empty tokens and 7 dots split in two, exactly as in the package."""
    assert rouge_l(tokenize(hyp).rouge, tokenize(ref).rouge).f == _rouge_chinese_f(hyp, ref)


def _dp_lcs(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def lcs_length(a: list[str], b: list[str]) -> int:
    return LcsIndex(a).lcs(b)


def test_bit_parallel_lcs_equals_dynamic_programming() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    assert lcs_length([], list("abc")) == 0
    rng = random.Random(7)
    for _ in range(200):
        a = [str(rng.randrange(5)) for _ in range(rng.randrange(0, 90))]
        b = [str(rng.randrange(5)) for _ in range(rng.randrange(0, 90))]
        assert lcs_length(a, b) == _dp_lcs([int(x) for x in a], [int(x) for x in b])


def test_sacrebleu_sentence_and_corpus_match_the_package() -> None:
    hyps, refs = [ZH_CAND, "今天天气很好，我们去公园散步。"], [ZH_REF, "今天天气不错，我们一起去公园散步吧。"]
    stats = [sacrebleu_sentence(h, r) for h, r in zip(hyps, refs, strict=True)]
    expected = sacrebleu.sentence_bleu(hyps[0], [refs[0]], tokenize="zh").score
    assert stats[0]["score"] == pytest.approx(expected)
    assert sacrebleu_corpus(stats) == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score)


async def test_judges_are_registered_and_score_one_writing() -> None:
    assert {"bleu", "rouge", "sacrebleu"} <= set(JUDGES)
    item, writing = _item(ZH_REF), Writing(infer_id="i1", model="m", output=ZH_CAND)
    bleu = await JUDGES["bleu"]().judge(item, writing)
    assert (bleu.method, bleu.status, bleu.meta["scale"]) == ("bleu", "ok", "0-100")
    assert bleu.score == 100 * round(5 / 7, 6)
    rouge = await OverlapJudge("rouge").judge(item, writing)
    assert rouge.score == _rouge_chinese_f(ZH_CAND, ZH_REF)
    assert rouge.meta["lcs"] == 5 and rouge.usage.calls == 0
    assert bleu.reference_source == rouge.reference_source == "human"


async def test_empty_writing_and_missing_reference_are_flagged() -> None:
    empty = await OverlapJudge("rouge").judge(_item(ZH_REF), Writing(infer_id="i1", model="m", output="  \n"))
    assert (empty.status, empty.score, empty.failures) == ("empty", 0.0, [])
    no_ref = await OverlapJudge("bleu").judge(_item(""), Writing(infer_id="i1", model="m", output=ZH_CAND))
    assert (no_ref.status, no_ref.score) == ("failed", None)
    assert no_ref.failures == ["item has no reference text"] and no_ref.reference_source is None


def test_equal_to_rouge_chinese_on_release_writings(bench_root: Path) -> None:
    items = {it.id: it for it in load_items(bench_root, tasks=["completion", "guide"])}
    writings = [w for w in load_release_writings(bench_root, tasks=["completion", "guide"]) if not w.is_empty]
    rng = random.Random(11)
    # rouge-chinese's O(nm) dict table is slow and memory-hungry: sample pairs of moderate size
    sample = [w for w in rng.sample(writings, 400) if len(w.output) * len(items[w.item_id].reference) < 400_000][:25]
    assert len(sample) >= 15
    pairs = [(items[w.item_id], w) for w in sample]
    batch = score_overlap(pairs, methods=("rouge", "bleu"))
    for (item, writing), judgment in zip(pairs, batch["rouge"], strict=True):
        assert judgment.score == _rouge_chinese_f(writing.output, item.reference)
    for (item, writing), judgment in zip(pairs, batch["bleu"], strict=True):
        assert judgment.score == bleu1(tokenize(writing.output).bleu, tokenize(item.reference).bleu)


def test_batch_keeps_pair_order_and_workers_give_the_same_values() -> None:
    first, second = _item(ZH_REF, item_id="a"), _item("今天天气不错，我们一起去公园散步吧。", item_id="b")
    pairs = [(first, Writing(infer_id="a", model="m1", output=ZH_CAND)),
             (second, Writing(infer_id="b", model="m1", output="今天天气很好。")),
             (first, Writing(infer_id="a", model="m2", output="")),
             (second, Writing(infer_id="b", model="m2", output="我们去公园。"))]
    seen: list[int] = []
    serial = score_overlap(pairs, progress=seen.append)
    forked = score_overlap(pairs, workers=2)
    assert sum(seen) == 4
    assert [(j.item_id, j.model) for j in serial["rouge"]] == [("a", "m1"), ("b", "m1"), ("a", "m2"), ("b", "m2")]
    assert serial["bleu"][2].status == "empty" and serial["rouge"][0].score == _rouge_chinese_f(ZH_CAND, ZH_REF)
    for method in ("bleu", "rouge", "sacrebleu"):
        assert [j.score for j in serial[method]] == [j.score for j in forked[method]]


def test_corpus_sacrebleu_per_model_counts_empty_writings() -> None:
    hyps, refs = [ZH_CAND, ""], [ZH_REF, "今天天气不错，我们一起去公园散步吧。"]
    pairs = [(_item(r, item_id=f"i{k}"), Writing(infer_id=f"i{k}", model="m", output=h))
             for k, (h, r) in enumerate(zip(hyps, refs, strict=True))]
    judged = score_overlap(pairs, methods=("sacrebleu",))["sacrebleu"]
    assert judged[1].status == "empty" and judged[1].meta["ref_len"] > 0
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score
    assert corpus_sacrebleu_by_model(judged) == {"m": pytest.approx(expected)}


def test_our_sentence_splitter_is_rouge_chinese_s(bench_root: Path) -> None:
    """The splitter rewritten in our words cuts exactly where the package's does: its quirks (two ends in a row,
    an ellipsis after a mark, quotes, ASCII dots), 50,000 random strings of the characters that matter, and
    every reference and instruction of the release."""
    cut = Rouge().cut_sent
    quirks = ["。。a", "。……a", "......。a", "他说：“好。”我走了。", "？’，x", "a。", "", "  。 \n 。", "…………a",
              "......a.....b", "“。”。”a", "?”?”x", "！’！b"]
    assert [split_sentences(t) for t in quirks] == [cut(t) for t in quirks]
    assert split_sentences("。。a") == ["。", "。a"]  # of two ends in a row only the first is split off
    rng = random.Random(36)
    alphabet = list("。！？?”’，.…a \n")
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(50_000)]
    assert [t for t in texts if split_sentences(t) != cut(t)] == []
    release = [text for item in load_items(bench_root) for text in (item.reference, item.instruction)]
    assert len(release) > 2000 and [t[:40] for t in release if split_sentences(t) != cut(t)] == []
