"""`howtobench run` with a judge endpoint but no writer stops with one line (exit 2) before loading anything: the
embedded 270M model used to write in place of the user's model without a word. No endpoint at all stays the
offline smoke run; --local-writer asks for the embedded writer on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fake_server import FakeServer
from howtobench.cli.main import app, main
from howtobench.errors import ConfigError

NOWHERE = "/nonexistent/howtobench-data"  # a run that loaded the benchmark would stop on this instead
NO_WRITER = ("a judge endpoint is given but no writer: give your model with --base-url URL --model NAME, your "
             "writings with --writings FILE, or --local-writer to let the embedded 270M model write (a smoke test)")


def judge_only(server: FakeServer, tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--judge-base-url", server.base_url, "--judge-model", "gpt-4o-2024-11-20", "--data", NOWHERE,
            "--run-dir", str(tmp_path / "run"), "--workspace", str(tmp_path / "ws"), "--no-progress", *extra]


def test_a_judge_without_a_writer_stops_before_loading_anything(fake_server: FakeServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, judge_only(fake_server, tmp_path))
    assert isinstance(result.exception, ConfigError) and str(result.exception) == NO_WRITER
    assert result.exception.exit_status == 2
    assert fake_server.requests == [] and not (tmp_path / "run").exists() and not (tmp_path / "ws").exists()


def test_the_user_sees_one_line_and_exit_status_2(fake_server: FakeServer, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["howtobench", *judge_only(fake_server, tmp_path, "--dry-run")])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2 and capsys.readouterr().err == f"error: {NO_WRITER}\n"


def test_a_judge_from_the_config_file_counts_too(fake_server: FakeServer, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"judge": {"base_url": fake_server.base_url, "model": "fake-judge"}}), "utf-8")
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--data", NOWHERE, "--no-progress",
                                      "--run-dir", str(tmp_path / "run"), "--workspace", str(tmp_path / "ws")])
    assert isinstance(result.exception, ConfigError) and str(result.exception) == NO_WRITER


def test_local_writer_lets_the_embedded_model_write_for_a_real_judge(fake_server: FakeServer, tmp_path: Path,
                                                                      bench_root: Path) -> None:
    args = [*judge_only(fake_server, tmp_path, "--local-writer", "--dry-run"), "--data", str(bench_root)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    assert "writer · gemma-3-270m-local" in result.output and "judge · gpt-4o-2024-11-20" in result.output
    assert fake_server.requests == []


def test_local_writer_contradicting_a_writer_or_no_generate_is_an_error(fake_server: FakeServer,
                                                                        tmp_path: Path) -> None:
    with_writer = judge_only(fake_server, tmp_path, "--local-writer", "--base-url", fake_server.base_url,
                             "--model", "mine")
    result = CliRunner().invoke(app, with_writer)
    assert str(result.exception) == "--local-writer and --base-url/--model contradict each other: give one"
    result = CliRunner().invoke(app, judge_only(fake_server, tmp_path, "--local-writer", "--no-generate"))
    assert str(result.exception) == "--local-writer and --no-generate contradict each other: give one"


def test_a_judge_with_writings_needs_no_writer(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    source = bench_root / "guide" / "inferences" / "deepseek-r1.jsonl"
    mine = tmp_path / "mine.jsonl"
    row = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    mine.write_text(json.dumps({**row, "model": "mine"}, ensure_ascii=False) + "\n", encoding="utf-8")
    args = [*judge_only(fake_server, tmp_path, "--writings", str(mine), "--method", "single", "--dry-run"),
            "--data", str(bench_root)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    assert "judge · gpt-4o-2024-11-20" in result.output and "baseline:single                1 call " in result.output
    assert "writer ·" not in result.output


def test_no_endpoint_at_all_is_still_the_offline_smoke_run(tmp_path: Path, bench_root: Path) -> None:
    """What ./scripts/main runs: the embedded model writes and judges, no error (a dry run: nothing starts)."""
    result = CliRunner().invoke(app, ["run", "--data", str(bench_root), "--dry-run", "--no-progress",
                                      "--run-dir", str(tmp_path / "run"), "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "writer · gemma-3-270m-local" in result.output
    assert "judge (your writings) · gemma-3-270m-local" in result.output


def test_the_config_yaml_of_a_local_writer_run_repeats_it(fake_server: FakeServer, tmp_path: Path,
                                                          bench_root: Path) -> None:
    """`run --config RUN_DIR/config.yaml` repeats a run: one whose embedded model wrote for a judge records
    local_writer, or repeating it would stop on the missing writer."""
    from howtobench.config import EndpointConfig
    from howtobench.run import RunSettings, run_config
    from howtobench.steps.settings import Execution, Selection

    settings = RunSettings(name="w", run_dir=tmp_path / "run", selection=Selection(data_dir=bench_root),
                           execution=Execution(workspace=tmp_path / "ws"),
                           judge=EndpointConfig(model="gpt-4o-2024-11-20", base_urls=(fake_server.base_url,)))
    saved = run_config(settings)
    assert saved["local_writer"] is True
    assert "local_writer" not in run_config(settings.model_copy(update={"judge": None}))  # the smoke run needs none
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(saved), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--dry-run", "--no-progress"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "writer · gemma-3-270m-local" in result.output and fake_server.requests == []
