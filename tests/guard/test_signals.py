"""The guard's signals and rules: crafted degenerate writings are caught, a normal writing is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from crafted import ENGLISH, STUB, guide_item_and_writing, padded, repeated_paragraph

from howtobench.errors import ConfigError
from howtobench.guard.guard import Guard, GuardSettings
from howtobench.guard.lexicon import Lexicon
from howtobench.guard.rules import rules_with
from howtobench.guard.signals import compression_ratio, foreign_share, repeated_ngram_share, signals


def test_normal_writing_flags_nothing(bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    verdict = Guard(GuardSettings(mode="skip")).check(item, writing)
    assert verdict.flags == () and verdict.skip is None
    assert 0.3 < verdict.signals.compression_ratio < 0.8  # type: ignore[operator]
    assert verdict.signals.length_ratio == pytest.approx(len(writing.strip()) / len(item.reference.strip()))


@pytest.mark.parametrize(("make", "rules"), [
    (repeated_paragraph, {"loop_paragraphs", "loop_sentences", "loop_ngrams", "compressible"}),
    (padded, {"loop_sentences", "loop_ngrams"}),
    (lambda w: ENGLISH, {"wrong_language"}),
    (lambda w: STUB, {"stub"}),
])
def test_crafted_degenerate_writings_are_skipped(bench_root: Path, make, rules: set[str]) -> None:
    item, writing = guide_item_and_writing(bench_root)
    verdict = Guard(GuardSettings(mode="skip")).check(item, make(writing))
    assert rules <= set(verdict.flags), verdict.reasons
    assert verdict.skip is not None and all(name in verdict.skip for name in rules & {"stub", "wrong_language",
                                                                                      "loop_paragraphs"})


def test_flag_mode_never_skips(bench_root: Path) -> None:
    item, writing = guide_item_and_writing(bench_root)
    verdict = Guard(GuardSettings(mode="flag")).check(item, repeated_paragraph(writing))
    assert "loop_paragraphs" in verdict.flags and verdict.skip is None


def test_signal_values_on_known_texts() -> None:
    assert compression_ratio("") is None
    assert compression_ratio("天气很好。" * 300) < 0.05  # type: ignore[operator]
    assert repeated_ngram_share("一二三四五六七八九十，" * 10, n=5) == pytest.approx(8 / 9)  # 9 anchors, 8 repeats
    assert foreign_share("中文中文", "zh") == 0.0 and foreign_share("abcde", "zh") == 1.0
    assert foreign_share("中文", "en") == 1.0 and foreign_share("123", "zh") is None
    s = signals("总而言之，综上所述。", prompt="")
    assert s.cliche_rate == pytest.approx(1000 * 2 / 10)
    prompt = "请写一篇文章，题目是春天的故事，要求结构清晰、语言优美，不少于八百字，内容积极向上，可以结合自己的经历。"
    assert signals(prompt, prompt=prompt).echo_share == 1.0
    own = "我家门前有一条小河，河水清澈见底，春天的时候两岸开满了桃花，非常好看。"
    assert signals(own, prompt=prompt).echo_share == 0.0


def test_lexicon_counts_contained_phrases_once(tmp_path: Path) -> None:
    lexicon = Lexicon({"en": ["as an AI", "As an AI language model"]})
    assert lexicon.count("As an AI language model, I ...") == 1
    own = tmp_path / "mine.yaml"
    own.write_text("zh: [春天来了]\n", encoding="utf-8")
    assert Guard(GuardSettings(mode="flag", cliches=own)).lexicon.count("春天来了，春天来了") == 2
    own.write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must map languages"):
        Lexicon.load(own)


def test_thresholds_and_actions_are_settings() -> None:
    rules = {r.name: r for r in rules_with({"loop_paragraphs": 0.3}, {"echo": "skip"})}
    assert rules["loop_paragraphs"].threshold == 0.3 and rules["echo"].skip
    with pytest.raises(ConfigError, match="did you mean 'stub'"):
        rules_with({"stubb": 0.1})
    with pytest.raises(ConfigError, match="skip or flag"):
        rules_with(actions={"echo": "drop"})  # type: ignore[dict-item]
