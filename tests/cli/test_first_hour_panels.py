"""docs/panels.md's example panel file (issue 40, 6): the file a user copies is the one the docs show, it loads, and
`judge --panel` plans with it (each judge priced on its own line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from howtobench.judges.panel import load_panel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "panel.yaml"


def test_the_docs_show_the_example_file_and_it_loads() -> None:
    doc = (ROOT / "docs" / "panels.md").read_text(encoding="utf-8")
    shown = doc.split("```yaml\n")[1].split("\n```")[0]
    assert shown + "\n" == EXAMPLE.read_text(encoding="utf-8")
    spec = load_panel(EXAMPLE)
    assert [j.name for j in spec.judges] == ["gpt4o", "deepseek", "local-qwen"]
    assert spec.aggregate == "mean" and spec.missing == "fail"
    by_name = {j.name: j.endpoint for j in spec.judges}
    assert by_name["gpt4o"].base_urls == ("https://api.openai.com/v1",)  # from the provider profile
    assert by_name["gpt4o"].api_key_env == "OPENAI_API_KEY"
    assert by_name["local-qwen"].concurrency == 16 and by_name["local-qwen"].api_key_env is None


def test_judge_plans_with_the_example_panel(tmp_path: Path, bench_root: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "HOWTOBENCH_DATA": str(bench_root)}
    done = subprocess.run([sys.executable, "-m", "howtobench", "judge", "--panel", str(EXAMPLE), "--task", "guide",
                           "--limit", "1", "--models", "deepseek-r1", "-o", str(tmp_path / "p.jsonl"), "--workspace",
                           str(tmp_path / "ws"), "--no-progress", "--dry-run"], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    for line in ("judge gpt4o · gpt-4o-2024-11-20", "judge deepseek · deepseek-chat",
                 "judge local-qwen · Qwen2.5-72B-Instruct"):
        assert line in printed, line
    assert not (tmp_path / "p.jsonl").exists()  # a plan sends nothing, writes nothing
