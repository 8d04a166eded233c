"""The reward path measured where it matters: judge tokens and the reward phase, on an emulated inference server.

One RL step's reward phase (`--groups` GRPO groups x `--rollouts` rollouts of Guide items; the release's writings
of different models stand in for a group's rollouts, so prompts have real lengths) scored three ways
against the same judge emulator (bench/judge_emulator.py: a 70B-class judge on one vLLM node, with prefix
caching), each side starting with the emulator's prefix cache cold:

- serve: `howtobench serve` with no concurrency flag, every rollout its own POST /get_reward sent by OpenRLHF's
  own client code (`SingleTurnAgentExecutor._fetch_rewards_via_http`, openrlhf 0.11.2), all at once as its
  agent executor sends them;
- naive: the reward function a verl user writes: per sample its own weights call and its 7 leaf calls, the leaf
  rubric first and the writing after it (close to the authors' layout, criteria first: a writing's leaves share
  nothing past the system prompt, but one leaf's prompts share the rubric and instructions across a group), every
  sample at once as verl's Reward Loop runs them; no call cache, `NAIVE_IN_FLIGHT` calls in flight;
- serial: the same function, one sample after another (`--serial` samples; its figures are per sample).

Printed per side: judge calls and prompt tokens computed per sample (reused ones from the prefix cache apart),
the reward phase's wall time in emulated seconds, and the judge's busy share over it (bench/judge_emulator.py).
    python bench/reward_path.py [--groups 40] [--rollouts 8] [--serial 4] [--speedup 10] [--serve-concurrency auto]
                                [--layouts writing-first,writing-last]

serve runs once per leaf layout (`--layouts`; writing-last is `--judge-option leaf_layout=writing-last`). Before
the runs a "theory" line gives the prompt tokens an unbounded prefix cache computes per sample for each side, from
the prompts themselves: what the shared prefix allows, whatever the concurrency. The figures of record are ratios
(naive vs serve), taken side by side in one run; the load average is printed.

What the shared prefix allows (W: a writing's tokens, R: a leaf's rubric, P: the instructions and reference, n
rollouts, 7 LLM leaves). A prefix is linear: a leaf prompt can share its writing with the writing's other leaves
(serve's default layout, writing-first: about P/n + W + 7R per sample) or its rubric with the group's other
rollouts (the naive function's rubric-first prompts, and the named layout writing-last: about 7W + 7(P + R)/n),
never both. Writing-first computes fewer when 6W > 7R(1 - 1/n): writings over ~1,900 characters at n = 8 with the
default tree. The release's Guide writings are shorter (median ~1,000 characters), so there the default layout is
behind the naive function and writing-last is what puts serve ahead; its remaining edge over the naive function is
its weights call, asked once per group (7.12 calls per sample against 8: 11 % fewer decode tokens; the naive
function's 8 identical weights prompts per group cost little prompt compute, they are cached).

Measured 2026-12-03 on the shared 2-core machine (load average 6-7.7, other agents' jobs running), defaults (40 x 8
release writings, auto concurrency), one run:

    theory (unbounded cache): serve writing-first 6,049, serve writing-last 4,896, naive 5,336 tokens per sample
    serve writing-first: 7.12 calls/sample, prompt tokens computed 6,308 per sample, judge busy 0.785
    serve writing-last : 7.12 calls/sample, prompt tokens computed 4,909 per sample, judge busy 0.705
    naive              : 8.00 calls/sample, prompt tokens computed 5,336 per sample, judge busy 0.735
    naive / serve writing-first: tokens 0.85x (theory 0.88x), reward phase 1.13x
    naive / serve writing-last : tokens 1.09x (theory 1.09x), reward phase 1.12x
    serial: 18.8 s/sample against 1.15 s/sample in a batch

With writings of 1,900 / 3,000 characters (each release writing repeated to that length) the theory line gives
naive / serve writing-first 1.21x / 1.52x and writing-last 1.02x / 1.01x. Writing-first's measured figure is
above its theory (6,308 against 6,049): a writing's 7 leaves start together, and a prefix still being computed is
not yet cached for the others (as in vLLM); writing-last's shared part is mostly cached from the group's earlier
rollouts. Busy share: no side reaches 0.9 on this loaded machine (the emulator's batch empties at the phase's tail;
serve's auto level ended at the cap of 256).

Figures of record, idle machine (load average 0.3-0.7 on 2 cores), defaults: prompt tokens computed per sample
serve writing-first 6,268, serve writing-last 4,902, naive 5,336, serial 7,046 (theory 6,049 / 4,896 / 5,336); judge
busy 0.786 / 0.847 / 0.859; naive / serve: tokens 0.85x (writing-first), 1.09x (writing-last); reward phase 0.95x,
1.13x. Those busy shares were taken on the wall clock, which counted the emulator's own Python time around each
step (~1 ms a 6-25 ms step) as the judge's, and no side could have reached 0.9: the busy share of a finite phase
stays under 1 even for an ideal client (the batch fills at chunked prefill's pace and empties over the last decodes).

The emulator now keeps an emulated clock and replays each side's own calls as an ideal client would send them (all
at once, no time of its own): each line prints the side's busy share beside the ideal client's, and "of capacity",
the ideal client's window over the side's (1 when the client cost the judge nothing; a little over 1 can happen, as
the calls sent as they came may meet the prefix cache a little better than all of them at once). Figures of record
at issue 37's end (auto's cap 1,024, the collector's young threshold raised while batches run), idle machine (load
average 0.3-0.5), defaults, one run: serve writing-first judge busy 0.936 (ideal client 0.936), of capacity 0.999;
serve writing-last 0.932 (0.932), 1.000; naive 0.943 (0.944), 1.000; prompt tokens computed per sample 6,316 / 4,912
/ 5,336 (theory 6,049 / 4,896 / 5,336), naive / serve 0.84x (writing-first) and 1.09x (writing-last); reward phase
1.00x and 1.13x (a second run after the emulator's clock stopped counting its own wake-ups: 0.936 / 1.000, 0.932 /
1.001, naive 0.943 / 1.000; reward phase 1.02x and 1.15x). Under auto's old cap of 256 (= the emulated batch) serve
reached 0.856 / 0.857 busy, 0.965 / 0.960 of capacity: a cap at the batch leaves the batch short whenever a reply is
being read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import itertools
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from judge_emulator import BLOCK_TOKENS, blocks_of, prompt_text  # noqa: E402
from prefix_cache import RubricFirstPrompts  # noqa: E402
from reward_server import PROMPT, start, wait_healthy  # noqa: E402

from howtobench.config import EndpointConfig  # noqa: E402
from howtobench.data.loader import load_items, load_release_writings  # noqa: E402
from howtobench.data.models import Item, Writing  # noqa: E402
from howtobench.event_loop import run  # noqa: E402
from howtobench.judges.negotiator import Negotiator  # noqa: E402
from howtobench.judges.prompts import LEAF_LAYOUTS, Messages, Prompts  # noqa: E402
from howtobench.judges.runner import judge_or_fail  # noqa: E402
from howtobench.judges.tree import default_tree  # noqa: E402
from howtobench.judges.tree_of_writing import TreeOfWriting  # noqa: E402
from howtobench.llm.client import open_client  # noqa: E402

Group = tuple[Item, list[str]]
# the naive function's calls in flight: twice the judge's batch, so the judge always has a full batch waiting (the
# openai client's own pool allows 1,000; more at once only waits longer in the judge's queue and, on this machine,
# times out connecting to the emulator)
NAIVE_IN_FLIGHT = 512


def release_groups(data: Path, n: int, groups: int, warmup: int) -> tuple[list[Group], list[Group]]:
    """Guide items with n release writings each (different models' writings stand in for a group's rollouts:
    real lengths, which decide what a prompt layout saves); the first `groups`, then `warmup` more."""
    items = load_items(data, ["guide"])
    by_item: dict[str, list[str]] = {}
    for writing in load_release_writings(data, ["guide"], items=items):
        if not writing.is_empty:
            by_item.setdefault(writing.item_id, []).append(writing.output)
    full = [(item, by_item[item.id][:n]) for item in items if len(by_item.get(item.id, ())) >= n]
    if len(full) < groups + warmup:
        raise SystemExit(f"only {len(full)} Guide items have {n} writings")
    return full[:groups], full[groups:groups + warmup]


def emulator_stats(base: str, reset: bool = False) -> dict[str, Any]:
    request = urllib.request.Request(base + ("/stats/reset" if reset else "/stats"), method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


async def through_openrlhf(url: str, groups: list[Group]) -> int:
    """Every rollout through OpenRLHF's own reward client, all at once; returns the rewards that are not numbers.
    (Its module is imported before the timing starts: importing it takes ~20 s, torch and transformers.)"""
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    class Executor:  # what `_fetch_rewards_via_http` reads of its executor
        reward_endpoints = [url + "/get_reward"]
        _reward_endpoint_cycle = itertools.cycle(reward_endpoints)

    executor = Executor()

    async def one(item: Item, text: str) -> Any:
        prompt = PROMPT.format(instruction=item.instruction)
        answer = await SingleTurnAgentExecutor._fetch_rewards_via_http(
            executor, [prompt + text + "<|im_end|>"], [prompt], [f"guide/{item.id}"])
        return answer[0]["rewards"][0]

    rewards = await asyncio.gather(*(one(item, text) for item, texts in groups for text in texts))
    return sum(r is None for r in rewards)


def step_prompts(prompts: Prompts, groups: list[Group], weights_per_sample: bool) -> list[Messages]:
    """Every prompt of one step's reward phase: per group its weights call (per sample for the naive function)
    and per rollout its LLM leaves."""
    tree, out = prompts.tree, []
    for item, texts in groups:
        weights = prompts.weights_messages(item, tree.negotiated_nodes(item.task))
        out += [] if weights_per_sample else [weights]
        for text in texts:
            out += [weights] if weights_per_sample else []
            out += [prompts.leaf_messages(item, text, leaf) for leaf in tree.leaves_for(item.task) if leaf.is_llm]
    return out


def ideal_computed(prompts: list[Messages]) -> int:
    """Prompt tokens an unbounded prefix cache computes for these prompts (the emulator's tokens and blocks, each
    prompt's longest cached run of blocks from its start reused, its last token always computed): the floor the
    layout allows, whatever the order and the concurrency."""
    seen: set[str] = set()
    computed = 0
    for messages in prompts:
        blocks, tokens = blocks_of(prompt_text({"messages": list(messages)}))
        hit = next((k for k, block in enumerate(blocks) if block not in seen), len(blocks))
        computed += tokens - min(hit * BLOCK_TOKENS, tokens - 1)
        seen.update(blocks)
    return computed


def theory(groups: list[Group]) -> dict[str, float]:
    """Prompt tokens computed per sample on an unbounded prefix cache, per side, from the prompts themselves."""
    tree, samples = default_tree(), sum(len(texts) for _, texts in groups)
    sides = {f"serve {layout}": ideal_computed(step_prompts(Prompts(tree, leaf_layout=layout), groups, False))
             for layout in LEAF_LAYOUTS}
    sides["naive"] = ideal_computed(step_prompts(RubricFirstPrompts(tree), groups, True))
    per_sample = {side: tokens / samples for side, tokens in sides.items()}
    print("theory, unbounded prefix cache: prompt tokens computed per sample " + ", ".join(
        f"{side} {tokens:,.0f}" for side, tokens in per_sample.items()) + "; naive / serve: " + ", ".join(
        f"{per_sample['naive'] / per_sample[f'serve {layout}']:.2f}x ({layout})" for layout in LEAF_LAYOUTS))
    return per_sample


def serve_side(base_url: str, groups: list[Group], warmup: list[Group], data: Path, workspace: Path,
               concurrency: str, layout: str = "writing-first") -> float:
    """The step's reward phase through serve, after a warm-up step on other items (a trainer's server has scored
    earlier steps: its calls in flight are found by then); returns its wall time."""
    cmd = [sys.executable, "-m", "howtobench", "serve", "--port", "0", "--judge-base-url", base_url,
           "--judge-model", "emulated-judge", "--judge-timeout", "600", "--workspace", str(workspace),
           "--data", str(data), *(["--judge-concurrency", concurrency] if concurrency != "default" else []),
           *(["--judge-option", f"leaf_layout={layout}"] if layout != "writing-first" else [])]
    server, url = start(cmd, "http://")
    try:
        wait_healthy(url)
        import openrlhf.utils.agent  # noqa: F401  (see `through_openrlhf`)

        if warmup:
            run(through_openrlhf(url, warmup))
        emulator_stats(base_url.removesuffix("/v1"), reset=True)  # the preflight and the warm-up left out
        started = time.perf_counter()
        nulls = run(through_openrlhf(url, groups))
        wall = time.perf_counter() - started
        with urllib.request.urlopen(url + "/metrics", timeout=30) as resp:
            level = resp.read().decode().split("\nhowtobench_judge_concurrency ")[1].split()[0]
        print(f"serve's judge calls in flight at the end: {float(level):.0f}")
    finally:
        server.terminate()
        server.wait(30)
    if nulls:
        print(f"warning: {nulls} null rewards through serve")
    return wall


async def naive(base_url: str, groups: list[Group], workspace: Path, serial: bool) -> float:
    """The naive function over every sample: all at once (verl's Reward Loop) or one after another.

    Rollout k of every group is scored on client k: a client shares identical requests in flight, which a user's
    function does not do, so the n identical weights calls of a group must not meet on one client."""
    samples = [(k, item, text) for item, texts in groups for k, text in enumerate(texts)]
    n = max(len(texts) for _, texts in groups)
    endpoint = EndpointConfig(model="emulated-judge", base_urls=(base_url,), timeout_s=600,
                              concurrency=max(1, NAIVE_IN_FLIGHT // n))  # NAIVE_IN_FLIGHT over the n clients
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(open_client(endpoint, workspace=workspace / f"client{k}",
                                                               cache_mode="off")) for k in range(n)]
        bases = [TreeOfWriting(client) for client in clients]
        for base in bases:
            base.prompts = RubricFirstPrompts(base.tree, base.prompts.language)

        async def one(k: int, item: Item, text: str) -> float | None:
            judge = copy.copy(bases[k])  # the same prompts, but a negotiator of its own: its own weights call
            judge.negotiator = Negotiator(judge.client, judge.tree, judge.prompts, sampling=judge.sampling)
            judged = await judge_or_fail(judge, item, Writing(infer_id=item.id, model="policy", output=text))
            return judged.score

        started = time.perf_counter()
        if serial:
            scores = [await one(*sample) for sample in samples]
        else:
            scores = await asyncio.gather(*(one(*sample) for sample in samples))
        wall = time.perf_counter() - started
    if any(s is None for s in scores):
        print(f"warning: {sum(s is None for s in scores)} naive judgments failed")
    return wall


def line(label: str, stats: dict[str, Any], samples: int, wall: float, speedup: float) -> dict[str, float]:
    computed, reused = stats["computed"] / samples, stats["reused"] / samples
    phase = wall * speedup
    print(f"{label:<20}: {stats['calls'] / samples:5.2f} calls/sample; prompt tokens computed {computed:8,.0f}/sample "
          f"(reused from the prefix cache {reused:7,.0f}); reward phase {phase:7.1f} s emulated "
          f"({phase / samples:6.2f} s/sample; the judge saw {stats['window_s']:.1f} s); "
          f"judge busy {stats['busy_share']:.3f} (an ideal client {stats['ideal_busy_share']:.3f}); of capacity "
          f"{stats['capacity_share']:.3f} (the ideal client's window {stats['ideal_window_s']:.1f} s)")
    return {"computed": computed, "phase": phase, "per_sample": phase / samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=8, help="groups of a warm-up step through serve, not measured")
    parser.add_argument("--serial", type=int, default=4, help="samples scored one after another (0: skip)")
    parser.add_argument("--speedup", type=float, default=10.0, help="the emulator's time divisor")
    parser.add_argument("--serve-concurrency", default="default",
                        help="--judge-concurrency given to serve (default: none given, i.e. auto)")
    parser.add_argument("--layouts", default=",".join(LEAF_LAYOUTS),
                        help="serve's leaf layouts, each a side of its own (default: both; writing-last is "
                        "`--judge-option leaf_layout=writing-last`)")
    args = parser.parse_args()
    data = Path(os.environ.get("HOWTOBENCH_DATA", Path(__file__).resolve().parents[2] / "shared" / "howtobench-data"))
    groups, warmup = release_groups(data, args.rollouts, args.groups, args.warmup)
    samples = args.groups * args.rollouts
    print(f"{args.groups} groups x {args.rollouts} rollouts of Guide items ({samples} samples); judge emulator "
          f"x{args.speedup:g} (bench/judge_emulator.py defaults: 70B on 4 x H100, batch 256)")
    emulator, first = start([sys.executable, str(Path(__file__).with_name("judge_emulator.py")),
                             "--speedup", str(args.speedup)], "PORT ")
    root = f"http://127.0.0.1:{first.split()[1]}"
    base_url = root + "/v1"
    ideal = theory(groups)
    served: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for layout in args.layouts.split(","):
                emulator_stats(root, reset=True)
                wall = serve_side(base_url, groups, warmup, data, Path(tmp) / f"serve-{layout}",
                                  args.serve_concurrency, layout)
                served[layout] = line(f"serve {layout}", emulator_stats(root), samples, wall, args.speedup)
            emulator_stats(root, reset=True)
            wall = run(naive(base_url, groups, Path(tmp) / "naive", serial=False))
            naive_side = line("naive", emulator_stats(root), samples, wall, args.speedup)
            if args.serial:
                emulator_stats(root, reset=True)
                few = [(groups[0][0], groups[0][1][: args.serial])]
                wall = run(naive(base_url, few, Path(tmp) / "serial", serial=True))
                line("serial", emulator_stats(root), args.serial, wall, args.speedup)
    finally:
        emulator.terminate()
        emulator.wait(10)
    for layout, side in served.items():
        print(f"naive / serve {layout}: prompt tokens computed {naive_side['computed'] / side['computed']:.2f}x "
              f"(theory {ideal['naive'] / ideal[f'serve {layout}']:.2f}x), reward phase "
              f"{naive_side['phase'] / side['phase']:.2f}x")
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
