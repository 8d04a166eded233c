"""How much memory does a sample queued in `howtobench serve` hold? (the figure behind `--max-queued`; issue 33)

Admits `--samples` samples of `--chars`-character Chinese responses into the server's `RewardService` over a judge
that never answers (every sample stays queued), then prints the Python heap they hold (tracemalloc), per sample
and for the default bound of 16,384. The request bodies are not counted: a trainer's request is read, parsed into
samples and freed; what stays is each sample's response text, its task and its place in the queue.

    python bench/serve_queue_memory.py [--samples 2000] [--chars 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import tracemalloc
from typing import Any

from howtobench.api import adhoc_item
from howtobench.serve.samples import Sample
from howtobench.serve.service import DEFAULT_MAX_QUEUED, RewardService


class NeverJudges:
    """A judge set whose judgments wait forever (the samples stay queued)."""

    async def judge(self, item: Any, response: str, **_kw: Any) -> Any:
        await asyncio.Event().wait()


async def main(samples: int, chars: int) -> None:
    item = adhoc_item("写一篇文章", None, "", "open", "zh")
    service = RewardService(NeverJudges(), deadline_s=0.01, max_queued=samples + 1)  # type: ignore[arg-type]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    texts = [("文" * (chars - 6)) + f"{k:06d}" for k in range(samples)]  # distinct strings, as rollouts are
    await service.score([Sample(item, text) for text in texts])
    texts.clear()  # the request's own list: what stays is held by the queued samples
    per = (tracemalloc.get_traced_memory()[0] - before) / samples
    print(f"{samples} samples of {chars} characters queued: {per / 1024:.1f} KiB per sample; "
          f"{per * DEFAULT_MAX_QUEUED / 2**20:.0f} MiB at --max-queued {DEFAULT_MAX_QUEUED}")
    await service.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--chars", type=int, default=3000)
    args = parser.parse_args()
    asyncio.run(main(args.samples, args.chars))
