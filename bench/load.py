"""How long loading the whole release takes: 1,302 items and 13,020 writings, every row checked.

    python bench/load.py [--data DIR] [--repeat 5]

Prints the best and median wall time of `load_items` and of `load_release_writings` (given the items), and the
row counts, so a change to the loader that slows it down (the goal is well under 2 s) shows up as a number.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from howtobench.config import resolve_data_dir
from howtobench.data.loader import LoadReport, load_items, load_release_writings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark root (default: $HOWTOBENCH_DATA)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions (best and median are printed)")
    args = parser.parse_args()
    root = resolve_data_dir(args.data)
    item_times, writing_times = [], []
    for _ in range(args.repeat):
        report = LoadReport()
        start = time.perf_counter()
        items = load_items(root, report=report)
        middle = time.perf_counter()
        writings = load_release_writings(root, report=report, items=items)
        item_times.append(middle - start)
        writing_times.append(time.perf_counter() - middle)
    print(f"data: {root}")
    for name, n, times in (("items", len(items), item_times), ("writings", len(writings), writing_times)):
        print(f"{name + ':':<9} {n:>6}  best {min(times):.3f} s  median {statistics.median(times):.3f} s")
    print(f"skipped rows: {report.skipped}")


if __name__ == "__main__":
    main()
