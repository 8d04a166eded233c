"""What the length-controlled leaderboard costs: the fit and its item bootstrap on a release-sized table.

    python bench/length_control.py [--models 10] [--items 434] [--bootstrap 1000] [--repeat 3]

Builds one task's table (models × items, every writing scored, log length ratios drawn at random, a seeded
judge that rewards length), then times `stats.length_fit.fit` and `bootstrap` (the per-item sums turn a
replicate into a weighted sum), and, for scale, one dense least-squares solve with an indicator column per item
(what a naive refit would pay per replicate); then the whole task's controlled cells with pooled and with
per-model slopes (`--length-slopes per-model`: own slopes, shrinkage and charges refitted in every replicate,
report.length_per_model), with the peak memory numpy allocated. Prints best and median wall times.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from howtobench.report.length_control import length_control
from howtobench.stats.length_fit import Observations, bootstrap, fit


def table(models: int, items: int, seed: int = 0) -> Observations:
    rng = np.random.default_rng(seed)
    m = np.repeat(np.arange(models), items)
    i = np.tile(np.arange(items), models)
    x = rng.normal(scale=0.5, size=m.size) + 0.1 * m
    y = 5 + 0.2 * m + rng.normal(size=items)[i] + 1.5 * x + rng.normal(scale=0.5, size=m.size)
    return Observations(m, i, x, y, models, items)


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--items", type=int, default=434, help="one task of the release (Open has 434)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    obs = table(args.models, args.items)
    rows: list[tuple[str, Callable[[], object]]] = [("fit (point estimate, with and without length)", lambda: fit(obs)),
            (f"bootstrap, {args.bootstrap} replicates", lambda: bootstrap(obs, args.bootstrap,
                                                                          np.random.default_rng(0)))]
    dense = np.column_stack([(obs.model[:, None] == np.arange(1, obs.n_models)).astype(float), obs.x,
                             (obs.item[:, None] == np.arange(obs.n_items)).astype(float)])
    rows.append(("one dense lstsq with item indicator columns", lambda: np.linalg.lstsq(dense, obs.y, rcond=None)))
    y, x = obs.y.reshape(args.models, args.items), obs.x.reshape(args.models, args.items)
    tasks, columns = np.full(args.items, "open"), [f"m{k}" for k in range(args.models)]

    def cells(slopes: str) -> Callable[[], object]:
        return lambda: length_control({"score": y}, x, tasks, columns, seed=0, n_boot=args.bootstrap, slopes=slopes)

    rows += [(f"controlled cells, {s}, {args.bootstrap} replicates", cells(s)) for s in ("pooled", "per-model")]
    print(f"{args.models} models × {args.items} items = {obs.y.size} writings")
    for label, run in rows:
        best, median = timed(run, args.repeat)
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  {label:<56} best {best * 1000:8.1f} ms   median {median * 1000:8.1f} ms   "
              f"peak {peak / 2**20:6.0f} MiB")


if __name__ == "__main__":
    main()
