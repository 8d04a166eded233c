"""cli/params: the flag groups a command gets by one decorator line, at the place it names, with their values
dropped (@flags) or handed over as one object (@bundled)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from howtobench.cli.judge_flags import AS_JUDGED, Judging
from howtobench.cli.money import DEFAULT_CONFIRM_ABOVE, Money
from howtobench.cli.params import (
    ASK,
    BATCH_FLAGS,
    CALL_FILES,
    EVERY_ITEM,
    ITEM_FILTERS,
    LIVE,
    MONEY_FLAGS,
    STOP_FIRST_CONTROL,
    WRITER_DEFAULTS,
    WRITING_CONTROL,
    Batching,
    Control,
    Filters,
    Sampling,
    bundled,
    flags,
    group_of,
)
from howtobench.llm.types import SamplingParams
from howtobench.steps.settings import Selection


def _command(first: int = 1, money: Money = ASK, last: int = 2, **seen: Any) -> dict[str, Any]:
    return {"first": first, "money": money, "last": last, **seen}


def test_flags_go_right_after_the_named_parameter_and_are_dropped_before_the_call() -> None:
    command = flags(CALL_FILES, after="first")(_command)
    assert list(inspect.signature(command).parameters) == [
        "first", "config", "workspace", "no_cache", "replay", "money", "last", "seen"]
    assert command(first=3, config=None, workspace=None, no_cache=True, replay=False, last=4) == {
        "first": 3, "money": ASK, "last": 4}


def test_bundled_puts_the_group_in_place_of_the_object_and_builds_it_from_the_flags() -> None:
    command = bundled("money", Money, MONEY_FLAGS)(_command)
    params = inspect.signature(command).parameters
    assert list(params) == ["first", "yes", "max_cost", "confirm_above", "last", "seen"]
    assert [params[n].default for n in ("yes", "max_cost", "confirm_above")] == [False, None, DEFAULT_CONFIRM_ABOVE]
    assert command(first=1, yes=True, max_cost=2.5, confirm_above=9.0, last=2)["money"] == Money(True, 2.5, 9.0)


def test_the_defaults_objects_are_what_the_flags_defaults_make() -> None:
    assert Money(**{name: default for name, _, default in MONEY_FLAGS}) == ASK
    assert Batching(**{name: default for name, _, default in BATCH_FLAGS}) == LIVE


def test_a_flag_declared_twice_or_a_missing_place_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match=r"declares \['config'\] itself"):
        flags(CALL_FILES, after="first")(lambda first=0, config=None: None)
    with pytest.raises(TypeError, match="no parameter 'nowhere'"):
        flags(CALL_FILES, after="nowhere")(_command)
    with pytest.raises(TypeError, match="no parameter 'batching'"):
        bundled("batching", Batching, BATCH_FLAGS)(_command)


def test_a_group_is_a_dataclass_s_fields_all_or_the_named_ones_in_the_order_named() -> None:
    assert [name for name, _, _ in group_of(Filters)] == ["data", "task", "genre", "models", "limit", "subset", "ids"]
    assert [name for name, _, _ in ITEM_FILTERS] == ["data", "task", "genre", "limit", "subset", "ids"]
    assert group_of(Money, "confirm_above", "yes") == (MONEY_FLAGS[2], MONEY_FLAGS[0])
    command = bundled("filters", Filters, ITEM_FILTERS)(lambda filters=EVERY_ITEM: filters)
    assert command(task=["guide"], limit=2) == Filters(task=["guide"], limit=2)


def test_the_item_flags_make_the_steps_selection(tmp_path: Path) -> None:
    flags = Filters(data=tmp_path, task=["guide", "open"], genre=None, models=["deepseek-chat"], subset=12, ids=[])
    assert flags.selection(seed=7, writings=[tmp_path / "w.jsonl"], strict=True) == Selection(
        data_dir=tmp_path, tasks=("guide", "open"), models=("deepseek-chat",), subset=12, seed=7,
        writings=(tmp_path / "w.jsonl",), strict=True)
    assert EVERY_ITEM.selection(seed=0) == Selection(data_dir=EVERY_ITEM.selection().data_dir)


def test_the_writer_s_sampling_flags_make_its_sampling_parameters() -> None:
    assert Sampling(temperature=0.2, top_p=0.9, max_tokens=64).params(5) == SamplingParams(
        temperature=0.2, top_p=0.9, max_tokens=64, seed=5)
    assert WRITER_DEFAULTS.params(0) == SamplingParams(temperature=0.7, max_tokens=4096, seed=0)


def test_the_judge_s_flags_make_only_the_options_changed_from_their_defaults() -> None:
    assert AS_JUDGED.options("tow") == {"prompt_language": "en"}
    assert AS_JUDGED.options("bleu") == {}
    assert Judging(no_reference=True, samples=3, judge_max_tokens=100, prompt_language="zh").options("tow") == {
        "prompt_language": "zh", "with_reference": False, "samples": 3, "max_tokens": 100}
    assert [name for name, _, _ in group_of(Judging)] == [
        "no_reference", "renormalize", "samples", "tree", "from_", "judge_max_tokens", "prompt_language",
        "judge_option"]  # issue 36: any option of the method


def test_strict_is_part_of_the_run_control_of_the_commands_that_read_input_rows() -> None:
    assert [name for name, _, _ in STOP_FIRST_CONTROL] == ["strict", "max_failed_rate", "no_progress", "dry_run",
                                                           "prices"]
    assert "strict" not in [name for name, _, _ in WRITING_CONTROL]
    assert bundled("control", Control, WRITING_CONTROL)(lambda control=None: control)(no_progress=True) == Control(
        no_progress=True)
