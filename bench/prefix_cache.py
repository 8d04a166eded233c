"""Does the prefix-first prompt layout pay off on a prefix-caching server? And how many judge calls per writing?

    python bench/prefix_cache.py [--data DIR] [--writings 3] [--max-tokens 32]

1. Judges the same few release writings with ToW on the embedded llama.cpp server (Gemma-3-270M), twice, each on
   a freshly started server with our call cache off: once with our layout (role, task, reference, writing, THEN
   the leaf rubric) and once with the rubric first. llama.cpp reuses the KV cache of the longest prefix shared
   with the previous prompt, so with our layout the 7 leaf calls of a writing evaluate the long shared part once.
   Prints both wall times and the ratio (goal: ours >= 2x faster).
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
from howtobench.judges.runner import run_judge
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


def pick_pairs(root: Path, n: int) -> list[tuple[Item, Writing]]:
    """n guide writings of mid-sized items (a long shared prefix, yet quick on a CPU), one per item."""
    items = load_items(root, ["guide"])
    writings = {(w.item_id, w.model): w for w in load_release_writings(root, ["guide"], MODELS, items=items)}
    sized = sorted(items, key=lambda it: len(it.reference) + len(it.information) + len(it.instruction))
    middle = sized[len(sized) // 4:]
    pairs = []
    for k, item in enumerate(middle):
        writing = writings.get((item.id, MODELS[k % len(MODELS)]))
        if writing is not None and 300 < len(writing.output) < 1500 and len(item.reference) < 1500:
            pairs.append((item, writing))
        if len(pairs) == n:
            break
    return pairs


async def timed_run(pairs: list[tuple[Item, Writing]], layout: type[Prompts], max_tokens: int) -> tuple[float, int]:
    """Wall time of judging `pairs` on a fresh local server with the given prompt layout; and the LLM calls made."""
    async with local_endpoint(quiet=True) as local:
        endpoint = local.model_copy(update={"reasks": 0, "concurrency": 1})
        with tempfile.TemporaryDirectory() as workspace:
            async with open_client(endpoint, workspace=Path(workspace), cache_mode="off") as client:
                judge = TreeOfWriting(client, max_tokens=max_tokens, reasks=0)
                for language in {item.language for item, _ in pairs}:
                    judge.prompts[language] = layout(judge.tree, language)
                start = time.perf_counter()
                await run_judge(judge, pairs, Path(workspace) / "out.jsonl", concurrency=1, progress=False)
                elapsed = time.perf_counter() - start
                return elapsed, client.usage().calls


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
    parser.add_argument("--writings", type=int, default=3, help="guide writings judged in each layout")
    parser.add_argument("--max-tokens", type=int, default=32, help="max tokens of each judge reply")
    args = parser.parse_args()
    root = resolve_data_dir(args.data)

    items, writings, calls = calls_per_writing(root, default_tree())
    print(f"release: {items} items, {writings} writings, {calls} judge calls (weights shared per item)")
    print(f"judge calls per writing: {calls / writings:.2f}  (goal <= 8.1)")

    pairs = pick_pairs(root, args.writings)
    chars = sum(len(i.reference) + len(i.information) + len(w.output) for i, w in pairs)
    print(f"\nprefix cache: {len(pairs)} guide writings ({chars} chars of reference+information+writing)")
    ours, ours_calls = asyncio.run(timed_run(pairs, Prompts, args.max_tokens))
    print(f"  prefix-first (ours): {ours:7.1f} s  ({ours_calls} calls)")
    theirs, their_calls = asyncio.run(timed_run(pairs, RubricFirstPrompts, args.max_tokens))
    print(f"  rubric-first       : {theirs:7.1f} s  ({their_calls} calls)")
    print(f"  speed-up: {theirs / ours:.2f}x  (goal >= 2x)")


if __name__ == "__main__":
    main()
