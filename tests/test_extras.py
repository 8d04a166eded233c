"""The slim core (issue 36 point 4): without the [plots] or [metrics] extra every command still starts, the
overlap methods are still listed, and the command that needs a missing extra says so in one line (exit 2)
before it does anything. The extras are hidden from a fresh interpreter (`sys.modules[name] = None` makes
both `import` and `importlib.util.find_spec` see the package as not installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from howtobench.errors import ConfigError
from howtobench.extras import EXTRAS, MissingExtra, missing, require

HIDDEN = ("jieba", "sacrebleu", "matplotlib", "mplfonts")


def howtobench_without_extras(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = (f"import sys; sys.modules.update(dict.fromkeys({HIDDEN!r})); from howtobench.cli.main import main; "
            "sys.argv = ['howtobench', *sys.argv[1:]]; main()")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_each_command_that_needs_a_missing_extra_names_it_in_one_line(tmp_path: Path, bench_root: Path) -> None:
    listed = howtobench_without_extras(tmp_path, "list", "methods", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert {"bleu", "rouge", "sacrebleu", "tow"} <= {row["method"] for row in json.loads(listed.stdout)["rows"]}

    judged = howtobench_without_extras(tmp_path, "judge", "--method", "bleu", "--data", str(bench_root), "--task",
                                       "guide", "--limit", "1", "--models", "deepseek-chat", "-o",
                                       str(tmp_path / "bleu.jsonl"), "--no-progress")
    assert judged.returncode == 2
    assert judged.stderr.strip().splitlines() == [
        "error: --method bleu needs the [metrics] extra (jieba, sacrebleu missing): pip install 'howtobench[metrics]'"]
    assert not (tmp_path / "bleu.jsonl").exists()

    figures = tmp_path / "figures"
    drawn = howtobench_without_extras(tmp_path, "analyze", "weights", str(tmp_path / "none.jsonl"), "--out",
                                      str(figures))
    assert drawn.returncode == 2
    assert drawn.stderr.strip().splitlines() == [
        "error: --out (figures) needs the [plots] extra (matplotlib missing): pip install 'howtobench[plots]'"]
    assert not figures.exists()


def test_the_core_commands_start_without_the_extras(tmp_path: Path) -> None:
    helped = howtobench_without_extras(tmp_path, "--help")
    assert helped.returncode == 0 and "analyze" in helped.stdout and "serve" in helped.stdout, helped.stderr
    serve_help = howtobench_without_extras(tmp_path, "serve", "--help")
    assert serve_help.returncode == 0, serve_help.stderr


def test_require_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(EXTRAS) == {"plots", "metrics"} and missing("metrics") == []
    require("metrics", "--method rouge")  # installed here: nothing said
    monkeypatch.setitem(sys.modules, "sacrebleu", None)
    assert missing("metrics") == ["sacrebleu"]
    with pytest.raises(MissingExtra, match=r"^--method rouge needs the \[metrics\] extra \(sacrebleu missing\)"):
        require("metrics", "--method rouge")
    assert issubclass(MissingExtra, ConfigError)  # a run-level stop: one line, exit 2
