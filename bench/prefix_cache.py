"""Does the prefix-first prompt layout pay off on a prefix-caching server? And how many judge calls per writing?

    python bench/prefix_cache.py [--data DIR] [--writings 2] [--max-tokens 16] [--min-chars 0] [--max-chars 2000]
    python bench/prefix_cache.py --writing-chars 2500      # writings of about 2,500 characters (issue 12's goal)

1. Judges the same few release writings with ToW on the embedded llama.cpp server (Gemma-3-270M), on a freshly
   started server with our call cache off, with our layout (role, task, reference, writing, THEN the leaf
   rubric) and with the rubric first, alternating writing by writing. llama.cpp reuses the KV cache of the
   longest prefix shared with the previous prompt, so with our layout the 7 leaf calls of a writing evaluate
   the long shared part once. Prints both wall times and the ratio (goal: ours >= 2x faster; >= 4x on a
   2,500-character writing, `--writing-chars 2500`, which picks writings of that length +-10%).
2. Prints the number of judge calls per writing for the 10-model release when weights are negotiated once per
   item and shared: (items + sum over writings of its task's LLM leaves) / writings (goal <= 8.1).

Same calls in both runs: same sampling (temperature 0, `--max-tokens`), no re-asks, one writing at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import re
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
from howtobench.llm.local import local_endpoint_config, local_server

MODELS = ("gpt-4o-2024-11-20", "deepseek-chat", "claude-3-5-sonnet-20241022")


class RubricFirstPrompts(Prompts):
    """The layout we avoid: the leaf rubric opens the user message, so no two leaves share a long prefix."""

    def leaf_messages(self, item: Item, writing: str, leaf: Leaf) -> Messages:
        has_reference = self.with_reference and bool(item.reference.strip())
        user = self.rubric(leaf, has_reference=has_reference) + "\n" + self.prefix(item, writing)
        return ({"role": "system", "content": self.system()}, {"role": "user", "content": user})


def pick_pairs(root: Path, n: int, min_chars: int, max_chars: int,
               writing_chars: int | None = None) -> list[tuple[Item, Writing]]:
    """n guide writings, one per item, each with reference + information + writing of min..max characters
    (or, with `writing_chars`, a writing of that many characters +-10%, shortest reference first)."""
    items = load_items(root, ["guide"])
    writings = {(w.item_id, w.model): w for w in load_release_writings(root, ["guide"], MODELS, items=items)}
    sized = sorted(items, key=lambda it: len(it.reference) + len(it.information) + len(it.instruction))
    pairs = []
    for k, item in enumerate(sized):
        writing = writings.get((item.id, MODELS[k % len(MODELS)]))
        if writing is None:
            continue
        size = len(item.reference) + len(item.information) + len(writing.output)
        if writing_chars is not None:
            fits = abs(len(writing.output) - writing_chars) <= writing_chars // 10
        else:
            fits = len(writing.output) > 300 and min_chars <= size < max_chars
        if fits:
            pairs.append((item, writing))
        if len(pairs) == n:
            break
    return pairs


EVALUATED = re.compile(r"remaining (\d+) prompt tokens to eval")


def evaluated_tokens(log: str) -> int:
    """Prompt tokens llama.cpp evaluated (not reused from the previous prompt's KV cache), from its verbose log."""
    return sum(int(n) for n in EVALUATED.findall(log))


async def timed_runs(pairs: list[tuple[Item, Writing]], max_tokens: int) -> tuple[float, float, int, int, int]:
    """Wall times of the leaf calls with our layout and with the rubric-first one, interleaved writing by writing,
    the prompt tokens the server evaluated for each, and the calls made.

    One fresh local server, our call cache off, one request at a time. The edge weights of each item are
    negotiated first, untimed (in the release one negotiation serves 10 writings). Per writing, our layout runs
    first, then the rubric-first layout, so slow drifts of the machine's load hit both alike.
    """
    ours_s = theirs_s = 0.0
    ours_tokens = theirs_tokens = 0
    async with local_server(quiet=True) as server:
        endpoint = local_endpoint_config(server).model_copy(update={"reasks": 0, "concurrency": 1})
        with tempfile.TemporaryDirectory() as workspace:
            async with open_client(endpoint, workspace=Path(workspace), cache_mode="off") as client:
                ours = TreeOfWriting(client, max_tokens=max_tokens, reasks=0)
                theirs = TreeOfWriting(client, max_tokens=max_tokens, reasks=0)
                for item, _ in pairs:
                    theirs.prompts[item.language] = RubricFirstPrompts(theirs.tree, item.language)
                    await ours.negotiator.weights(item)
                    await theirs.negotiator.weights(item)
                for k, (item, writing) in enumerate(pairs, start=1):
                    log0, start = len(server.log.read_text()), time.perf_counter()
                    await ours.judge(item, writing)
                    log1, middle = len(server.log.read_text()), time.perf_counter()
                    await theirs.judge(item, writing)
                    log = server.log.read_text()
                    ours_s, theirs_s = ours_s + middle - start, theirs_s + time.perf_counter() - middle
                    mine, other = evaluated_tokens(log[log0:log1]), evaluated_tokens(log[log1:])
                    ours_tokens, theirs_tokens = ours_tokens + mine, theirs_tokens + other
                    print(f"  writing {k}: prefix-first {middle - start:6.1f} s ({mine} prompt tokens evaluated), "
                          f"rubric-first {time.perf_counter() - middle:6.1f} s ({other})", flush=True)
                return ours_s, theirs_s, ours_tokens, theirs_tokens, client.usage().calls


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
    parser.add_argument("--writing-chars", type=int, default=None,
                        help="pick writings of this many characters (+-10%%) instead of --min/--max-chars")
    args = parser.parse_args()
    root = resolve_data_dir(args.data)

    items, writings, calls = calls_per_writing(root, default_tree())
    print(f"release: {items} items, {writings} writings, {calls} judge calls (weights shared per item)")
    print(f"judge calls per writing: {calls / writings:.2f}  (goal <= 8.1)")

    pairs = pick_pairs(root, args.writings, args.min_chars, args.max_chars, args.writing_chars)
    chars = sum(len(i.reference) + len(i.information) + len(w.output) for i, w in pairs)
    print(f"\nprefix cache: {len(pairs)} guide writings ({chars} chars of reference+information+writing; "
          f"writings of {', '.join(str(len(w.output)) for _, w in pairs)} chars)")
    ours, theirs, ours_tokens, theirs_tokens, calls = asyncio.run(timed_runs(pairs, args.max_tokens))
    print(f"  total: prefix-first (ours) {ours:.1f} s, rubric-first {theirs:.1f} s ({calls} calls incl. weights)")
    print(f"  prompt tokens evaluated: ours {ours_tokens:,}, rubric-first {theirs_tokens:,} "
          f"({theirs_tokens / max(ours_tokens, 1):.2f}x fewer; independent of the machine's load)")
    goal = "4x for a 2,500-character writing" if args.writing_chars else "2x"
    print(f"  speed-up: {theirs / ours:.2f}x  (goal >= {goal})")


if __name__ == "__main__":
    main()
