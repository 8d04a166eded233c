"""`run_settings.RUN_OPTIONS` is the one flag <-> settings table of `run`: the settings `run` builds from its flags,
written as config.yaml and read back through `run --config`, are the same settings (every option of the table
round-trips); and config.yaml's text for typical runs is the one the hand-kept mapping wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import howtobench.cli.run as cli_run
from howtobench.calibration.record import Calibration, JudgeInfo, save_calibration
from howtobench.cli.main import app
from howtobench.config import EndpointConfig
from howtobench.guard.guard import GuardSettings
from howtobench.llm.types import SamplingParams
from howtobench.run import CONFIG_HEADER, RunSettings, run_config
from howtobench.run_settings import RUN_OPTIONS, settings_from
from howtobench.steps.settings import Execution, Selection


def config_text(settings: RunSettings) -> str:
    """config.yaml as `run` writes it (run._write_config)."""
    return CONFIG_HEADER + yaml.safe_dump(run_config(settings), allow_unicode=True, sort_keys=False)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[RunSettings]:
    """The settings each `run` invocation built (it stops after the estimate: nothing is planned or called)."""
    seen: list[RunSettings] = []

    async def plan(settings: RunSettings, prices: Path | None = None) -> list[Any]:
        seen.append(settings)
        return []

    monkeypatch.setattr(cli_run, "plan_run", plan)
    monkeypatch.setattr(cli_run, "estimate_first", lambda kind, estimate, *a, **k: estimate() is None)
    return seen


def invoke(args: list[str]) -> None:
    result = CliRunner().invoke(app, ["run", *args, "--no-progress", "--dry-run"])
    assert result.exit_code == 0, (result.output, result.exception)


def round_trip(tmp_path: Path, built: list[RunSettings], flags: list[str]) -> dict[str, Any]:
    """Run with `flags`, write the settings as config.yaml, run with `--config` only: the same settings."""
    invoke(flags)
    config = tmp_path / "config.yaml"
    config.write_text(config_text(built[-1]), encoding="utf-8")
    invoke(["--config", str(config)])
    first, again = built[-2:]
    assert again == first
    return run_config(first)


def test_every_option_of_the_table_round_trips_through_config_yaml(tmp_path: Path, bench_root: Path,
                                                                   built: list[RunSettings]) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_text("", encoding="utf-8")
    prices = tmp_path / "prices.yaml"
    prices.write_text("{}\n", encoding="utf-8")
    calibration = tmp_path / "cal.json"
    save_calibration(Calibration(kind="anchors", reference=JudgeInfo(model="ref", method="tow"),
                                 new=JudgeInfo(model="judge", method="tow")), calibration)
    panel = tmp_path / "panel.yaml"
    panel.write_text("judges:\n  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: judge-a}\n"
                     "  - {name: b, base_url: 'http://127.0.0.1:9/v1', model: judge-b}\naggregate: median\n",
                     encoding="utf-8")
    common = ["--data", str(bench_root), "--workspace", str(tmp_path / "ws"), "--base-url", "http://127.0.0.1:9/v1",
              "--model", "mine", "--api-key-env", "MY_KEY", "--concurrency", "3"]
    with_judge = round_trip(tmp_path, built, [
        *common, "--name", "rt", "--run-dir", str(tmp_path / "run"), "--method", "tow", "--task", "guide,open",
        "--genre", "fiction", "--limit", "2", "--subset", "5", "--ids", "a1,b2", "--writings", str(mine),
        "--generate", "--release", "--models", "deepseek-r1", "--prices", str(prices), "--temperature", "0.3",
        "--max-tokens", "100", "--system-prompt", "Be brief.", "--seed", "3", "--bootstrap", "50", "--no-paper",
        "--empty", "lowest", "--parallel", "4", "--length-control", "--length-anchor", "3",
        "--length-slopes", "per-model", "--judge-max-tokens", "64",
        "--prompt-language", "zh", "--reference-from", "deepseek-r1", "--judge-base-url", "http://127.0.0.1:9/v1",
        "--judge-model", "judge", "--judge-rpm", "60", "--judge-timeout", "30", "--judge-response-format",
        "json_object", "--calibration", str(calibration), "--guard", "skip", "--guard-reward", "null",
        "--guard-threshold", "stub=0.05", "--guard-action", "echo=skip", "--guard-cliches", str(prices),
        "--judge-concurrency", "auto:40", "--judge-option", "samples=2"])
    settings = built[-1]
    assert settings.judge is not None and (settings.judge.concurrency, settings.judge.max_concurrency) == (None, 40)
    assert settings.calibration == calibration and settings.length_anchor == 3
    assert settings.length_slopes == "per-model"
    assert settings.guard == GuardSettings(mode="skip", thresholds={"stub": 0.05}, actions={"echo": "skip"},
                                           reward=None, cliches=prices)
    assert settings.selection == Selection(data_dir=bench_root, tasks=("guide", "open"), genres=("fiction",),
                                           models=("deepseek-r1",), limit=2, subset=5, ids=("a1", "b2"), seed=3,
                                           writings=(mine,))
    assert settings.sampling == SamplingParams(temperature=0.3, max_tokens=100, seed=3)
    assert settings.judge_options == {"max_tokens": 64, "prompt_language": "zh"}
    assert settings.judge_option == ("samples=2",)  # converted by the method when the judge is built (issue 36)
    assert settings.execution.parallel == 4 and settings.execution.prices == prices
    with_panel = round_trip(tmp_path, built, [*common, "--panel", str(panel), "--no-release"])
    assert built[-1].panel is not None and [m.name for m in built[-1].panel.judges] == ["a", "b"]
    written = set(with_judge) | set(with_panel)
    assert {option.key for option in RUN_OPTIONS} <= written  # each option of the table was in a round trip


def test_settings_from_refuses_a_key_the_table_does_not_hold(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"not options of run: \['tasks'\]"):
        settings_from({"name": "x", "run_dir": tmp_path, "data": tmp_path, "workspace": tmp_path, "tasks": ["a"]})


OPENAI = ("https://api.openai.com/v1",)

TYPICAL = """\
# The options of this run. `howtobench run --config THIS_FILE` repeats it (and resumes it).
name: gpt-4o-mini-tow
run_dir: runs/gpt-4o-mini-tow
data: /data/howtobench
workspace: .howtobench
method: tow
task:
- guide
- open
limit: 2
generate: true
models:
- deepseek-r1
temperature: 0.7
max_tokens: 4096
seed: 3
bootstrap: 1000
paper: true
empty: exclude
parallel: 8
length_control: true
judge_max_tokens: 512
prompt_language: en
"""


def _openai_section(name: str, model: str, concurrency: int | str) -> str:
    """A writer: / judge: section of OpenAI's endpoint with the default settings, as config.yaml holds it."""
    return (f"{name}:\n  base_url:\n  - https://api.openai.com/v1\n  model: {model}\n  api_key_env: OPENAI_API_KEY\n"
            f"  concurrency: {concurrency}\n  rpm: null\n  max_retries: 6\n  reasks: 2\n"
            "  response_format: json_schema\n  use_max_completion_tokens: false\n  json_object_schema: false\n"
            "  timeout: 300.0\n")


TYPICAL += _openai_section("writer", "gpt-4o-mini", "auto") + _openai_section("judge", "gpt-4o-2024-11-20", 16)

GIVEN_WRITINGS = """\
# The options of this run. `howtobench run --config THIS_FILE` repeats it (and resumes it).
name: mine
run_dir: runs/mine
data: /data/howtobench
workspace: ws
method: rouge
genre:
- 诗歌
subset: 24
ids:
- guide-1
- open-2
writings:
- a.jsonl
- b/c.jsonl
generate: false
release: false
prices: prices.yaml
temperature: 0.7
max_tokens: 4096
system_prompt: Write well.
seed: 0
bootstrap: 0
paper: false
empty: lowest
reference_from: deepseek-r1
panel: panel.yaml
"""


def test_config_yaml_of_typical_runs_is_unchanged() -> None:
    typical = RunSettings(
        name="gpt-4o-mini-tow", run_dir=Path("runs/gpt-4o-mini-tow"),
        selection=Selection(data_dir=Path("/data/howtobench"), tasks=("guide", "open"), limit=2, seed=3,
                            models=("deepseek-r1",)),
        execution=Execution(workspace=Path(".howtobench"), parallel=8),
        judge_options={"prompt_language": "en", "max_tokens": 512},
        writer=EndpointConfig(model="gpt-4o-mini", base_urls=OPENAI, api_key_env="OPENAI_API_KEY"),
        judge=EndpointConfig(model="gpt-4o-2024-11-20", base_urls=OPENAI, api_key_env="OPENAI_API_KEY",
                             concurrency=16),
        sampling=SamplingParams(temperature=0.7, max_tokens=4096, seed=3), length_control=True)
    assert config_text(typical) == TYPICAL
    given = RunSettings(
        name="mine", run_dir=Path("runs/mine"),
        selection=Selection(data_dir=Path("/data/howtobench"), genres=("诗歌",), subset=24, ids=("guide-1", "open-2"),
                            writings=(Path("a.jsonl"), Path("b/c.jsonl"))),
        execution=Execution(workspace=Path("ws"), prices=Path("prices.yaml")),
        method="rouge", generate=False, release=False, system_prompt="Write well.", bootstrap=0, paper=False,
        empty="lowest", reference_from="deepseek-r1", panel_file=Path("panel.yaml"))
    assert config_text(given) == GIVEN_WRITINGS
