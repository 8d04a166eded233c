"""What a job's identity costs: the content digest of the whole release selection (1,302 items, 13,020 writings)
that batch-file jobs and shards now carry instead of the data's path (steps/job_identity.py).

    python bench/job_identity.py [--data DIR] [--repeat N]

Prints the time to select the pairs (what every judge job does anyway) and the time of the digest over them,
best of N. Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def main() -> None:
    from howtobench.steps.job_identity import pairs_digest
    from howtobench.steps.judge import JudgeJob, pairs_of_selection
    from howtobench.steps.settings import Execution, Selection

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("HOWTOBENCH_DATA", "data")))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    job = JudgeJob(Selection(data_dir=args.data), Execution(workspace=Path("/tmp/unused"), progress=False),
                   Path("/tmp/unused.jsonl"))
    started = time.perf_counter()
    pairs = pairs_of_selection(job)
    selecting = time.perf_counter() - started
    best = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        digest = pairs_digest(pairs)
        best = min(best, time.perf_counter() - started)
    items = len({item.id for item, _ in pairs})
    print(f"{len(pairs):,} writings of {items:,} items: selected in {selecting:.2f} s; "
          f"content digest {digest[:16]} in {best:.2f} s (best of {args.repeat})")


if __name__ == "__main__":
    main()
