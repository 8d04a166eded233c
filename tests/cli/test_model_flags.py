"""`model_flags` reads a command's shared flag set by parameter name, the way every model-calling command does."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from howtobench.cli.options import model_flags
from howtobench.errors import ConfigError


def _params(**given: object) -> dict[str, object]:
    base: dict[str, object] = {"config": None, "workspace": None, "no_cache": False, "replay": False}
    return {**base, **given}


def test_writer_and_judge_from_flags_over_config_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("judge_model: file-judge\njudge_base_url: http://j/v1\nrpm: 7\n", encoding="utf-8")
    flags = model_flags(_params(
        config=config, workspace=tmp_path / "ws", replay=True,
        base_url=["http://w/v1"], model="writer", api_key_env=None, concurrency=3, rpm=None, timeout=None,
        judge_base_url=None, judge_model="flag-judge", judge_api_key_env=None, judge_concurrency=None,
        judge_rpm=None, judge_timeout=None,
    ))
    assert flags.writer is not None and flags.writer.model == "writer"
    assert flags.writer.base_urls == ("http://w/v1",) and flags.writer.concurrency == 3 and flags.writer.rpm == 7
    assert flags.judge is not None and flags.judge.model == "flag-judge"
    assert flags.judge.base_urls == ("http://j/v1",)
    assert flags.workspace == tmp_path / "ws" and flags.cache_mode == "replay"


def test_a_command_without_writer_flags_ignores_writer_keys_in_the_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("base_url: http://only-url/v1\n", encoding="utf-8")  # half a writer: an error if it were read
    flags = model_flags(_params(config=config, no_cache=True, judge_base_url=None, judge_model=None))
    assert flags.writer is None and flags.judge is None and flags.cache_mode == "off"


def test_half_an_endpoint_and_contradicting_cache_flags_are_errors() -> None:
    with pytest.raises(ConfigError, match="--judge-base-url is missing"):
        model_flags(_params(judge_base_url=None, judge_model="m"))
    with pytest.raises(typer.BadParameter):
        model_flags(_params(no_cache=True, replay=True))
