"""Does the prefix-first prompt layout pay off on a prefix-caching server? And how many judge calls per writing?

    python bench/prefix_cache.py [--data DIR] [--writings 2] [--max-tokens 16] [--min-chars 0] [--max-chars 2000]

1. Judges the same few release writings with ToW on the embedded llama.cpp server (Gemma-3-270M), on a freshly
   started server with our call cache off, with our layout (role, task, reference, writing, THEN the leaf
   rubric) and with the rubric first, alternating writing by writing. llama.cpp reuses the KV cache of the
   longest prefix shared with the previous prompt, so with our layout the 7 leaf calls of a writing evaluate
   the long shared part once. Prints both wall times and the ratio (goal: ours >= 2x faster).
2. Prints the number of judge calls per writing for the 10-model release when weights are negotiated once per
   item and shared: (items + sum over writings of its task's LLM leaves) / writings (goal <= 8.1).

Same calls in both runs: same sampling (temperature 0, `--max-tokens`), no re-asks, one writing at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings
from howtobench.data.models import Item, Writing
from howtobench.judges.prompts import Messages, Prompts
from howtobench.judges.tree import Leaf, Tree, default_tree
from howtobench.judges.tree_of_writing import TreeOfWriting
from howtobench.llm.client import open_client
from howtobench.llm.local import local_endpoint

MODELS = ("gpt-4o-2024-11-20", "deepseek-chat", "claude-3-5-sonnet-20241022")


class RubricFirstPrompts(Prompts):
    """The layout we avoid: the leaf rubric opens the user message, so no two leaves share a long prefix."""

    def leaf_messages(self, item: Item, writing: str, leaf: Leaf) -> Messages:
        has_reference = self.with_reference and bool(item.reference.strip())
        user = self.rubric(leaf, has_reference=has_reference) + "\n" + self.prefix(item, writing)
        return ({"role": "system", "content": self.system()}, {"role": "user", "content": user})


def pick_pairs(root: Path, n: int, min_chars: int, max_chars: int) -> list[tuple[Item, Writing]]:
    """n guide writings, one per item, each with reference + information + writing of min..max characters."""
    items = load_items(root, ["guide"])
    writings = {(w.item_id, w.model): w for w in load_release_writings(root, ["guide"], MODELS, items=items)}
    sized = sorted(items, key=lambda it: len(it.reference) + len(it.information) + len(it.instruction))
    pairs = []
    for k, item in enumerate(sized):
        writing = writings.get((item.id, MODELS[k % len(MODELS)]))
        size = len(item.reference) + len(item.information) + len(writing.output) if writing else 0
        if writing is not None and len(writing.output) > 300 and min_chars <= size < max_chars:
            pairs.append((item, writing))
        if len(pairs) == n:
            break
    return pairs


async def timed_runs(pairs: list[tuple[Item, Writing]], max_tokens: int) -> tuple[float, float, int]:
    """Wall times of the leaf calls with our layout and with the rubric-first one, interleaved writing by writing.

    One fresh local server, our call cache off, one request at a time. The edge weights of each item are
    negotiated first, untimed (in the release one negotiation serves 10 writings). Per writing, our layout runs
    first, then the rubric-first layout, so slow drifts of the machine's load hit both alike.
    """
    ours_s = theirs_s = 0.0
    async with local_endpoint(quiet=True) as local:
        endpoint = local.model_copy(update={"reasks": 0, "concurrency": 1})
        with tempfile.TemporaryDirectory() as workspace:
            async with open_client(endpoint, workspace=Path(workspace), cache_mode="off") as client:
                ours = TreeOfWriting(client, max_tokens=max_tokens, reasks=0)
                theirs = TreeOfWriting(client, max_tokens=max_tokens, reasks=0)
                for item, _ in pairs:
                    theirs.prompts[item.language] = RubricFirstPrompts(theirs.tree, item.language)
                    await ours.negotiator.weights(item)
                    await theirs.negotiator.weights(item)
                for k, (item, writing) in enumerate(pairs, start=1):
                    start = time.perf_counter()
                    await ours.judge(item, writing)
                    middle = time.perf_counter()
                    await theirs.judge(item, writing)
                    ours_s, theirs_s = ours_s + middle - start, theirs_s + time.perf_counter() - middle
                    print(f"  writing {k}: prefix-first {middle - start:6.1f} s, rubric-first "
                          f"{time.perf_counter() - middle:6.1f} s", flush=True)
                return ours_s, theirs_s, client.usage().calls


def calls_per_writing(root: Path, tree: Tree) -> tuple[int, int, int]:
    """(items, writings, judge calls) for the release: one weights call per item + each writing's LLM leaves."""
    items = load_items(root)
    writings = load_release_writings(root, items=items)
    task_of = {it.id: it.task for it in items}
    llm_leaves = {task: sum(leaf.is_llm for leaf in tree.leaves_for(task)) for task in set(task_of.values())}
    negotiating = {it.id for it in items if tree.negotiated_nodes(it.task)}
    leaf_calls = sum(llm_leaves[task_of[w.item_id]] for w in writings if not w.is_empty)
    return len(items), len(writings), len(negotiating) + leaf_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark root (default: $HOWTOBENCH_DATA)")
    parser.add_argument("--writings", type=int, default=2, help="guide writings judged in each layout")
    parser.add_argument("--max-tokens", type=int, default=16, help="max tokens of each judge reply")
    parser.add_argument("--min-chars", type=int, default=0,
                        help="smallest reference + information + writing (characters) of a picked writing")
    parser.add_argument("--max-chars", type=int, default=2000,
                        help="largest reference + information + writing (characters) of a picked writing")
    args = parser.parse_args()
    root = resolve_data_dir(args.data)

    items, writings, calls = calls_per_writing(root, default_tree())
    print(f"release: {items} items, {writings} writings, {calls} judge calls (weights shared per item)")
    print(f"judge calls per writing: {calls / writings:.2f}  (goal <= 8.1)")

    pairs = pick_pairs(root, args.writings, args.min_chars, args.max_chars)
    chars = sum(len(i.reference) + len(i.information) + len(w.output) for i, w in pairs)
    print(f"\nprefix cache: {len(pairs)} guide writings ({chars} chars of reference+information+writing)")
    ours, theirs, calls = asyncio.run(timed_runs(pairs, args.max_tokens))
    print(f"  total: prefix-first (ours) {ours:.1f} s, rubric-first {theirs:.1f} s ({calls} calls incl. weights)")
    print(f"  speed-up: {theirs / ours:.2f}x  (goal >= 2x)")


if __name__ == "__main__":
    main()
