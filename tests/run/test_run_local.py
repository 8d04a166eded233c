"""`run_benchmark` with no endpoint at all: the embedded local model writes and judges, the table says SMOKE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from howtobench.run import RunSettings, run_benchmark
from howtobench.steps.settings import Execution, Selection

ITEM = "infer_1308"  # the shortest completion item (5 LLM leaves per writing)


@pytest.mark.local_model
@pytest.mark.timeout(900)
async def test_run_on_the_local_model_is_labelled_smoke(bench_root: Path, tmp_path: Path) -> None:
    settings = RunSettings(
        name="local",
        run_dir=tmp_path / "run",
        selection=Selection(data_dir=bench_root, ids=(ITEM,)),
        execution=Execution(workspace=tmp_path / "ws", progress=False),
        release=False,
        bootstrap=100,
    )
    result = await run_benchmark(settings)
    board = result.leaderboard
    assert board.columns == ("gemma-3-270m-local",)  # its own writing; --release would add the shipped ones
    assert all(c.judged == c.scored == 1 and c.failed == 0 for c in board.counts.values())
    assert result.failed == 0  # the exit status of `howtobench run` would be 0
    cells = [cell for (_metric, _row, column), cell in board.cells.items() if column == "gemma-3-270m-local"]
    assert cells and all(cell.mean is not None and 0 <= cell.mean <= 10 and cell.n_failed == 0 for cell in cells)
    assert (settings.run_dir / "report.html").is_file()
    assert result.generation is not None and result.generation.written == 1 and result.generation.failed == 0
    written = json.loads((settings.run_dir / "writings" / "gemma-3-270m-local.jsonl").read_text(encoding="utf-8"))
    assert written["generation"]["sampling"]["max_tokens"] == 128  # the local writer is capped for smoke runs
    markdown = (settings.run_dir / "leaderboard.md").read_text(encoding="utf-8")
    assert "SMOKE JUDGE" in markdown and "deepseek-r1 (paper, gpt-4o judge, not comparable)" in markdown
    manifest = result.manifest
    assert manifest["smoke"] is True and manifest["judge"]["embedded_local_model"] is True
    assert manifest["usage"]["weights"]["calls"] == 1 and manifest["usage"]["generation"]["calls"] == 1
