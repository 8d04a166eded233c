"""Do the CLI's defaults saturate a judge endpoint? (a benchmark, not a test; issue 15, point 4)

Runs `howtobench judge --method single --judge-concurrency 64` — no --parallel — against a fake server in its
own process (64 slots x 100 ms = 640 calls/s), and prints the calls/s the server saw between the first call
and the last (from the workspace's call log, so loading the data and the preflight are not counted), the ratio
to capacity, and the CPU time this process spent per judged call over that same window (every thread: the
call log's writer too) and over the whole command (start-up, data loading, the money-first estimate).
Goal: ratio >= 0.9. `--parallel N` shows what the old default (8) gave.

    python bench/saturation.py [--items 300] [--concurrency 64] [--latency 0.1] [--parallel N] [--progress]
                               [--judge-concurrency none|N]

Figures measured on a loaded machine understate the client: re-run on an idle one for the figures of record.
CPU ms per call is distorted less by the load than calls/s (it still grows a little: caches shared with the
other jobs), so compare it when the machine is busy.

Issue 37, no concurrency flag (auto) against --judge-concurrency 64, in turn, 300 items, the machine loaded (load
average ~6 on 2 cores, other agents' jobs; CPU-bound at ~1.5 ms/call): auto 0.422 / 0.402 of capacity, 64 fixed
0.466 / 0.455, so auto gives 0.88-0.91 of the fixed setting here (the old fixed default of 8 gave 0.12).

Then the same bodies are posted again over one bare aiohttp session, `--concurrency` at once: the share of
capacity HTTP alone reaches at this load, and its CPU per call. The whole release (`--items 0`, 13,020 writings:
12,968 calls, the empty ones need none), no flag, the machine loaded (load average 3.3 on 2 cores): 67 s wall in
all; judge 0.691 of capacity at 1.40 ms CPU per call while calling, bare aiohttp 0.931 at 0.362 ms: CPU-bound here,
judge reaches 0.74 of what bare HTTP reaches. The figure of record is for an idle machine.

Figure of record, idle machine (load average 0.2-0.3 on 2 cores), `--items 0` (all 13,020 release writings), no
concurrency flag: judge 0.940 of capacity (602 calls/s), client CPU 1.301 ms/call while calling; bare aiohttp with
the same 12,968 bodies 64 at once 0.969 at 0.331 ms/call (judge / bare = 0.97). At issue 37's end (the collector's
young threshold raised while batches run; auto's cap 1,024), idle (load average 0.6): judge 0.966 (618 calls/s) at
1.219 ms/call while calling, 1.650 for the whole command; bare aiohttp 0.972 at 0.260 (judge / bare = 0.99).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import threading
import time
from bisect import bisect_left
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reward_server import bare_replay, logged_bodies  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from fake_server import FakeServerProcess  # noqa: E402
from howtobench.cli.main import app  # noqa: E402
from howtobench.event_loop import run  # noqa: E402
from howtobench.llm.cache import DB_NAME  # noqa: E402


class CpuSampler(threading.Thread):
    """Samples (wall clock, this process's CPU time) every `interval_s`, so the CPU spent between two instants
    of the call log (its first start, its last finish) can be read back afterwards."""

    def __init__(self, interval_s: float = 0.01) -> None:
        super().__init__(name="cpu-sampler", daemon=True)
        self.interval_s = interval_s
        self.samples: list[tuple[float, float]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append((time.time(), time.process_time()))
            self._halt.wait(self.interval_s)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def cpu_at(self, when: float) -> float:
        """Process CPU seconds at wall-clock time `when` (linear between the two nearest samples)."""
        walls = [w for w, _ in self.samples]
        k = min(max(bisect_left(walls, when), 1), len(walls) - 1)
        (w0, c0), (w1, c1) = self.samples[k - 1], self.samples[k]
        return c0 + (c1 - c0) * (when - w0) / (w1 - w0) if w1 > w0 else c1


def call_window(workspace: Path) -> tuple[int, float, float]:
    """Fresh judge calls in the log (not the preflight), the first start and the last finish (Unix seconds)."""
    with sqlite3.connect(workspace / DB_NAME) as db:
        n, first, last = db.execute(
            "SELECT COUNT(*), MIN(started_at), MAX(finished_at) FROM calls "
            "WHERE from_cache = 0 AND purpose != 'preflight'").fetchone()

    def unix(stamp: str) -> float:
        return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()

    return n, unix(first), unix(last)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300,
                        help="items (--subset); 10 shipped writings each; 0: every item (13,020 writings)")
    parser.add_argument("--concurrency", type=int, default=64, help="the fake server's slots")
    parser.add_argument("--judge-concurrency", default="none",
                        help="given to judge (default none: no flag, i.e. auto, as a user runs it; e.g. 64)")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--parallel", type=int, default=None)
    parser.add_argument("--progress", action="store_true", help="draw the progress bar (default: --no-progress)")
    args = parser.parse_args()
    capacity = args.concurrency / args.latency
    with FakeServerProcess(latency=args.latency, capacity=args.concurrency) as server, \
            tempfile.TemporaryDirectory() as tmp:
        subset = ["--subset", str(args.items)] if args.items else []
        cli = ["judge", "--method", "single", *subset, "--judge-base-url", server.base_url,
               "--judge-model", "fake-judge", "--workspace", f"{tmp}/ws", "-o", f"{tmp}/out.jsonl"]
        given = args.judge_concurrency or str(args.concurrency)
        cli += [] if given == "none" else ["--judge-concurrency", given]
        cli += ["--parallel", str(args.parallel)] if args.parallel else []
        cli += [] if args.progress else ["--no-progress"]
        sampler = CpuSampler()
        sampler.start()
        cpu = time.process_time()
        result = CliRunner().invoke(app, cli, env={"HOWTOBENCH_DATA": os.environ.get(
            "HOWTOBENCH_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "howtobench-data"))})
        cpu = time.process_time() - cpu
        sampler.stop()
        if result.exit_code != 0:
            raise SystemExit(f"judge failed: {result.output}{result.exception!r}")
        calls, first, last = call_window(Path(tmp) / "ws")
        bodies = logged_bodies(Path(tmp) / "ws")
        bare_cpu, bare_wall = run(bare_replay(server.base_url, bodies, args.concurrency))
    rate, window_cpu = calls / (last - first), sampler.cpu_at(last) - sampler.cpu_at(first)
    label = f"--parallel {args.parallel}" if args.parallel else "default --parallel"
    flag = "no --judge-concurrency (auto)" if given == "none" else f"--judge-concurrency {given}"
    print(f"{label}, {flag}: {calls} calls, {rate:.0f} calls/s, "
          f"ratio to capacity ({capacity:.0f} calls/s): {rate / capacity:.3f}  "
          f"client CPU: {window_cpu / calls * 1000:.3f} ms/call while calling, "
          f"{cpu / calls * 1000:.3f} ms/call for the whole command")
    print(f"bare aiohttp, the same {len(bodies)} bodies {args.concurrency} at once: ratio to capacity "
          f"{len(bodies) / bare_wall / capacity:.3f}  CPU: {bare_cpu / len(bodies) * 1000:.3f} ms/call (what this "
          f"machine allows at this load: judge's ratio / this ratio = {rate * bare_wall / len(bodies):.2f})")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
