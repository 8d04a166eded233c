"""The guard on the release: what each default rule flags in the 13,020 writings, and the time per writing.

    python bench/guard.py [--data DIR] [--repeat 3]

1. Loads every writing of the paper's ten models (Completion, Guide, Open) with its item.
2. Checks each with the default guard (`--guard skip`), `--repeat` times; prints the CPU time per writing (mean and
   the 99th percentile of the best pass: the machine may be shared, the best pass is the least disturbed) and the
   writings' mean length.
3. Prints each rule's count and share, and how many writings `--guard skip` would skip (the issue's bound: 0.5 %).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings
from howtobench.guard.guard import Guard, GuardSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = resolve_data_dir(None if args.data is None else Path(args.data))
    items = load_items(root)
    by_id = {item.id: item for item in items}
    writings = load_release_writings(root, items=items)
    guard = Guard(GuardSettings(mode="skip"))
    best: list[float] | None = None
    for _ in range(args.repeat):
        times, verdicts = [], []
        for w in writings:
            t0 = time.process_time()
            verdicts.append(guard.check(by_id[w.item_id], w.output))
            times.append(time.process_time() - t0)
        if best is None or sum(times) < sum(best):
            best = times
    assert best is not None
    n = len(writings)
    p99 = sorted(best)[int(0.99 * n)]
    print(f"{n:,} writings, mean {sum(len(w.output) for w in writings) / n:,.0f} characters")
    print(f"time per writing (CPU, best of {args.repeat}): mean {1000 * sum(best) / n:.3f} ms, p99 {1000 * p99:.3f} ms")
    counts = Counter(name for v in verdicts for name in v.flags)
    for rule in guard.rules:
        print(f"  {rule.name:16s} {'skip' if rule.skip else 'flag'}  {counts[rule.name]:5d}  "
              f"{100 * counts[rule.name] / n:5.2f} %")
    skipped = sum(v.skip is not None for v in verdicts)
    print(f"--guard skip would skip {skipped} of {n:,} ({100 * skipped / n:.2f} %)")


if __name__ == "__main__":
    main()
