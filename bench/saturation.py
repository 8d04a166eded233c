"""Do the CLI's defaults saturate a judge endpoint? (a benchmark, not a test; issue 15, point 4)

Runs `howtobench judge --method single --judge-concurrency 64` — no --parallel — against a fake server in its
own process (64 slots x 100 ms = 640 calls/s), and prints the calls/s the server saw between the first call
and the last (from the workspace's call log, so loading the data is not counted) and the ratio to capacity.
Goal: ratio >= 0.9. `--parallel N` shows what the old default (8) gave.

    python bench/saturation.py [--items 300] [--concurrency 64] [--latency 0.1] [--parallel N]

Figures measured on a loaded machine understate the client: re-run on an idle one for the figures of record.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from typer.testing import CliRunner  # noqa: E402

from fake_server import FakeServerProcess  # noqa: E402
from howtobench.cli.main import app  # noqa: E402
from howtobench.llm.cache import DB_NAME  # noqa: E402


def calls_per_second(workspace: Path) -> tuple[int, float]:
    """Fresh calls in the log and their rate from the first start to the last finish."""
    with sqlite3.connect(workspace / DB_NAME) as db:
        n, first, last = db.execute(
            "SELECT COUNT(*), MIN(started_at), MAX(finished_at) FROM calls WHERE from_cache = 0").fetchone()
    span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    return n, n / span


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300, help="items (--subset); 10 shipped writings each")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--parallel", type=int, default=None)
    args = parser.parse_args()
    capacity = args.concurrency / args.latency
    with FakeServerProcess(latency=args.latency, capacity=args.concurrency) as server, \
            tempfile.TemporaryDirectory() as tmp:
        cli = ["judge", "--method", "single", "--subset", str(args.items), "--judge-base-url", server.base_url,
               "--judge-model", "fake-judge", "--judge-concurrency", str(args.concurrency), "--workspace",
               f"{tmp}/ws", "-o", f"{tmp}/out.jsonl", "--no-progress"]
        cli += ["--parallel", str(args.parallel)] if args.parallel else []
        result = CliRunner().invoke(app, cli, env={"HOWTOBENCH_DATA": os.environ.get(
            "HOWTOBENCH_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "howtobench-data"))})
        if result.exit_code != 0:
            raise SystemExit(f"judge failed: {result.output}{result.exception!r}")
        calls, rate = calls_per_second(Path(tmp) / "ws")
    label = f"--parallel {args.parallel}" if args.parallel else "default --parallel"
    print(f"{label}, --judge-concurrency {args.concurrency}: {calls} calls, {rate:.0f} calls/s, "
          f"ratio to capacity ({capacity:.0f} calls/s): {rate / capacity:.3f}")


if __name__ == "__main__":
    main()
