"""`--config FILE`: checked keys with did-you-mean, writer: / judge: sections, every endpoint setting also a flag,
and a run's own config.yaml repeats the run."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from fake_server import FakeServer, default_handler
from howtobench.cli.main import app
from howtobench.config import EndpointConfig


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output + (str(result.exception) if result.exception else "")


def test_unknown_key_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("judge_modle: gpt-4o\n", encoding="utf-8")
    code, out = invoke(["judge", "--config", str(config), "--method", "rouge", "-o", str(tmp_path / "o.jsonl")])
    assert code != 0 and "unknown key 'judge_modle'" in out and "did you mean 'judge_model'?" in out
    config.write_text("judge:\n  modle: gpt-4o\n", encoding="utf-8")
    code, out = invoke(["judge", "--config", str(config), "--method", "rouge", "-o", str(tmp_path / "o.jsonl")])
    assert code != 0 and "unknown key 'modle' under judge: (did you mean 'model'?)" in out


def test_judge_section_reaches_the_judge_and_flags_win(fake_server: FakeServer, tmp_path: Path,
                                                      bench_root: Path) -> None:
    fake_server.handler = default_handler
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "judge": {"base_url": fake_server.base_url, "model": "from-file", "use_max_completion_tokens": True,
                  "response_format": "json_object"},
        "task": "guide", "limit": 1, "models": "deepseek-r1",  # one value stands for a list of one
        "base_url": "http://writer-only/v1",  # a key of other commands (generate, run): left to them
    }), encoding="utf-8")
    out = tmp_path / "single.jsonl"
    code, text = invoke(["judge", "--config", str(config), "--method", "single", "--data", str(bench_root),
                         "--workspace", str(tmp_path / "ws"), "-o", str(out), "--no-progress",
                         "--judge-reasks", "0"])
    assert code == 3, text  # the fake echoes text, no valid judgment: a writing-level failure (exit status 3)
    assert len(fake_server.requests) == 2
    ping, body = fake_server.requests  # the preflight is sent with the endpoint's own settings too
    assert ping["model"] == "from-file" and ping["max_completion_tokens"] == 1 and "max_tokens" not in ping
    assert body["model"] == "from-file" and "max_completion_tokens" in body and "max_tokens" not in body
    assert body["response_format"]["type"] == "json_object"
    code, text = invoke(["judge", "--config", str(config), "--method", "single", "--data", str(bench_root),
                         "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "b.jsonl"), "--no-progress",
                         "--judge-model", "from-flag"])
    assert code == 3, text
    assert fake_server.requests[-1]["model"] == "from-flag"


def test_every_endpoint_setting_is_a_flag() -> None:
    help_text = CliRunner().invoke(app, ["run", "--help"], terminal_width=200).output
    # max_concurrency is the N of `--concurrency auto:N` (llm/adaptive.py), not a flag of its own
    flags = {"base_urls": "base-url", "timeout_s": "timeout", "max_concurrency": "concurrency"}
    for field in EndpointConfig.model_fields:
        flag = flags.get(field, field.replace("_", "-"))
        assert f"--{flag}" in help_text and f"--judge-{flag}" in help_text, field


def test_a_runs_config_yaml_repeats_the_run(fake_server: FakeServer, tmp_path: Path, bench_root: Path) -> None:
    fake_server.handler = default_handler
    run_dir = tmp_path / "run"
    args = ["run", "--data", str(bench_root), "--subset", "3", "--seed", "4", "--method", "single",
            "--base-url", fake_server.base_url, "--model", "w", "--judge-base-url", fake_server.base_url,
            "--judge-model", "j", "--judge-reasks", "1", "--workspace", str(tmp_path / "ws"), "--run-dir",
            str(run_dir), "--bootstrap", "20", "--no-progress", "--max-tokens", "64", "--no-release"]
    code, text = invoke(args)
    assert code == 0, text
    calls = len(fake_server.requests)
    first = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    saved = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    assert saved["subset"] == 3 and saved["judge"]["model"] == "j" and saved["judge"]["reasks"] == 1
    code, text = invoke(["run", "--config", str(run_dir / "config.yaml"), "--no-progress"])
    assert code == 0, text
    # the same run: everything resumed, nothing called again but the writer's and the judge's preflight
    assert [r["messages"] for r in fake_server.requests[calls:]] == [[{"role": "user", "content": "ping"}]] * 2
    again = json.loads((run_dir / "leaderboard.json").read_text(encoding="utf-8"))
    assert again["cells"] == first["cells"] and again["columns"] == ["w"]


def test_a_config_file_that_does_not_parse_is_one_line_with_its_position(tmp_path: Path) -> None:
    """PyYAML's own message spans four lines (with a caret); the toolkit says FILE:LINE:COLUMN: problem."""
    config = tmp_path / "c.yaml"
    config.write_text("judge:\n  model: [gpt-4o,\n", encoding="utf-8")
    code, out = invoke(["judge", "--config", str(config), "--method", "rouge", "-o", str(tmp_path / "o.jsonl")])
    assert code != 0 and f"config file {config}:3:1: expected the node content" in out.replace("\n", " ")
    code, out = invoke(["judge", "--config", str(tmp_path / "none.yaml"), "--method", "rouge"])
    assert code != 0 and "none.yaml: No such file or directory" in out and "Errno" not in out


def test_unknown_key_in_a_section_is_named_as_written(tmp_path: Path) -> None:
    """A typo under `judge:` is named as the user wrote it, with the section's own key as the suggestion (the
    message named 'judge_base_ulr', a key the file does not hold)."""
    config = tmp_path / "c.yaml"
    config.write_text("judge:\n  model: gpt-4o\n  base_ulr: http://x/v1\n", encoding="utf-8")
    code, out = invoke(["judge", "--config", str(config), "--method", "rouge", "-o", str(tmp_path / "o.jsonl")])
    assert code != 0
    assert "unknown key 'base_ulr' under judge: (did you mean 'base_url'?)" in out
    assert "judge_base_ulr" not in out


def test_a_config_file_sets_the_bundled_item_flags_and_a_flag_wins(tmp_path: Path, bench_root: Path) -> None:
    """--task, --models and --limit reach `judge` as one `params.Filters`; the file still sets them by name."""
    config = tmp_path / "c.yaml"
    config.write_text("task: guide\nmodels: [deepseek-chat]\nlimit: 2\n", encoding="utf-8")
    out = tmp_path / "bleu.jsonl"
    code, text = invoke(["judge", "--config", str(config), "--data", str(bench_root), "--method", "bleu", "-o",
                         str(out), "--no-progress"])
    assert code == 0, text
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["task"], r["model"]) for r in rows) == [("guide", "deepseek-chat")] * 2
    code, text = invoke(["judge", "--config", str(config), "--data", str(bench_root), "--method", "bleu", "-o",
                         str(tmp_path / "one.jsonl"), "--no-progress", "--limit", "1"])
    assert code == 0, text
    assert len((tmp_path / "one.jsonl").read_text(encoding="utf-8").splitlines()) == 1
