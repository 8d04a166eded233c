"""Panel agreement at benchmark size: `analyze panel` (and, with --report, the report) on a panel file of
13,020 writings × 3 judges with continuous roots and leaf scores, as `judge --panel` writes it.

    python bench/panel_agreement.py [--writings 13020] [--judges 3] [--leaves 6] [--empties 31] [--report]

Writes the file into a temporary directory, then runs each command as a user would (`python -m howtobench ...`
in a child process) and prints its wall time and peak resident memory (the child's ru_maxrss). The
`krippendorff` package builds a (units × V × V) array with V the distinct values: on continuous roots 1,000
writings ask it for 60 GiB; `stats.alpha` keeps O(judges × writings).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from howtobench.judges.base import Judgment, LeafResult, PanelRecord

TASKS = ("completion", "guide", "open")


def panel_file(path: Path, writings: int, judges: int, leaves: int, empties: int, seed: int = 0) -> None:
    """One line per writing: a panel judgment whose members score root and leaves around a writing's quality."""
    rng = np.random.default_rng(seed)
    names = [f"judge{a}" for a in range(judges)]
    with path.open("w", encoding="utf-8") as out:
        for w in range(writings):
            task = TASKS[w % 3]
            empty = w < empties
            quality = rng.uniform(2, 9)
            members = {}
            for name in names:
                root = 1.0 if empty else float(np.clip(quality + rng.normal(0, 0.9), 1, 10))
                leaf = [LeafResult(name=f"leaf{k}", node="content", score=1.0 if empty else float(
                    np.clip(quality + rng.normal(0, 1.5), 1, 10)), reason="…") for k in range(leaves)]
                members[name] = Judgment(method="tow", item_id=f"i{w}", model=f"m{w % 11}", task=task, genre="p",
                                         score=root, status="empty" if empty else "ok", leaves=leaf)
            mean = float(np.mean([m.score for m in members.values()]))  # type: ignore[misc]
            row = Judgment(method="tow", item_id=f"i{w}", model=f"m{w % 11}", task=task, genre="p", score=mean,
                           status="empty" if empty else "ok",
                           panel=PanelRecord(aggregate="mean", missing="fail", rule="mean", members=members))
            out.write(row.model_dump_json() + "\n")


def run(args: list[str]) -> tuple[float, float, str]:
    """(seconds, peak MiB of the child, stdout) of `python -m howtobench ARGS`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "howtobench", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, check=False)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise SystemExit(f"howtobench {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, max(peak, before) / 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writings", type=int, default=13_020)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--leaves", type=int, default=6)
    parser.add_argument("--empties", type=int, default=31, help="empty writings (the release has 31)")
    parser.add_argument("--report", action="store_true", help="also time `howtobench report` on the file")
    a = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "panel.jsonl"
        start = time.perf_counter()
        panel_file(path, a.writings, a.judges, a.leaves, a.empties)
        written = time.perf_counter() - start
        print(f"panel file: {a.writings:,} writings x {a.judges} judges x (root + {a.leaves} leaves), "
              f"{a.empties} empty, {path.stat().st_size / 2**20:.0f} MiB, written in {written:.1f} s")
        seconds, peak, out = run(["analyze", "panel", str(path), "--format", "json", "--top", "10"])
        root = next(r for r in json.loads(out)[0]["rows"] if r["task"] == "All" and r["measure"] == "root")
        print(f"analyze panel: {seconds:.1f} s, peak {peak:.0f} MiB (whole process: load, alpha and ICC per task "
              f"and measure, disputed list); All root alpha {root['Krippendorff α (interval)']:.4f} over "
              f"{root['writings (α)']:,} writings")
        if a.report:
            seconds, peak, _ = run(["report", str(path), "-o", str(Path(tmp) / "report.html"), "--bootstrap",
                                    "200", "--explorer", "0"])
            print(f"report (bootstrap 200): {seconds:.1f} s, peak {peak:.0f} MiB")


if __name__ == "__main__":
    main()
