"""Start-up time: `judge --help` and a judge run do not import scipy (about a second on a busy machine); only the
statistics that need it import it, when they run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fake_server import FakeServer

PROBE = """
import sys
from howtobench.cli.main import main
sys.argv = ["howtobench", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    print("EXIT", exc.code or 0)
print("SCIPY", "scipy" in sys.modules)
"""


def probe(*args: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def test_judge_help_does_not_import_scipy() -> None:
    out = probe("judge", "--help")
    assert "EXIT 0" in out and "SCIPY False" in out, out


def test_a_judge_run_does_not_import_scipy(fake_server: FakeServer, bench_root: Path, tmp_path: Path) -> None:
    out = probe("judge", "--data", str(bench_root), "--method", "single", "--task", "guide", "--limit", "2",
                "--models", "deepseek-chat", "--judge-base-url", fake_server.base_url, "--judge-model", "fake-judge",
                "--workspace", str(tmp_path / "ws"), "-o", str(tmp_path / "single.jsonl"), "--no-progress")
    assert "EXIT 0" in out and "SCIPY False" in out, out
    assert len((tmp_path / "single.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_the_leaderboard_still_gets_its_wilcoxon_p_value() -> None:
    import numpy as np
    from scipy import stats

    from howtobench.stats import wilcoxon_p

    diff = np.array([0.5, -1.0, 2.0, 1.5, 3.0, -0.25])
    assert wilcoxon_p(diff) == stats.wilcoxon(diff).pvalue
