"""What judging one model on the whole benchmark costs, per judge model, method and pricing mode.

    python bench/cost.py [--data DIR] [--writer gpt-4o-2024-11-20] [--judges gpt-4o,gpt-4o-mini,...]
                         [--completion ceiling|max-tokens] [--reason-chars N] [--limit N]

The calls are the ones the real judges make (ToW, elaborated rubric, single) on the writer's 1,302 release
writings, recorded without sending anything (`RecordingClient`) writing by writing, in the order a judge
sends them. Prompt tokens are estimated from characters; each call is replayed through the provider's
prefix cache (`llm/pricing.py`: OpenAI 1,024+ tokens in 128-token steps, DeepSeek 64-token units) and
priced at list, cached, batch and batch + cached rates from the price table.

Completion tokens: `ceiling` (default) takes what the reply schema lets a valid reply hold, with every text
field (a leaf's analysis, a rubric dimension's reason) `--reason-chars` Chinese characters long (default 200,
an assumption: no real judge was measured here; 0 takes each field's maxLength, and a field without one — the
analyses are unbounded — falls back to max_tokens). The last table varies that length. `max-tokens`
takes each call's max_tokens, what `--dry-run` charges (it errs high on purpose).

Then the ToW / rubric ratio per mode (paper: 5.6x at list price; goal <= 2x with caching), the full ToW
judgment with GPT-4o under batch + caching (goal <= $30), and what each layout of the ToW leaf prompt
costs: shared-first (ours: system, task, information, reference, writing, then the leaf's criteria) against
leaf-first (the leaf's criteria open the user message: calls of one leaf share them across writings, the calls on
one writing share nothing past the system prompt).
Everything printed is computed here; no model is called and nothing is written.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings, select_items
from howtobench.data.models import Item, Writing
from howtobench.errors import HowtobenchError
from howtobench.judges.base import build_judge
from howtobench.llm.accounting import Price, load_prices, price_for
from howtobench.llm.dryrun import RecordingClient
from howtobench.llm.pricing import MODES, CallTokens, Mode, call_tokens, completion_budget, mode_costs
from howtobench.llm.types import ChatRequest

METHODS = ("tow", "rubric", "single")
REASON_LENGTHS = (50, 100, 200, 400, 800)
DEFAULT_REASON_CHARS = 200  # an assumed typical analysis (~135 tokens); no real judge was measured here
JUDGES = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "deepseek-chat")
Layout = Callable[[list[ChatRequest]], list[ChatRequest]]


async def record(method: str, pairs: Sequence[tuple[Item, Writing]]) -> list[list[ChatRequest]]:
    """The requests the judge makes, per writing, in the order it makes them (nothing is sent)."""
    client = RecordingClient("priced-later")
    judge = build_judge(method, client, {})
    per_writing: list[list[ChatRequest]] = []
    for item, writing in pairs:
        start = len(client.requests)
        with contextlib.suppress(HowtobenchError):  # the recording client answers every call with a failure
            await judge.judge(item, writing)
        per_writing.append(client.requests[start:])
    return per_writing


def shared_first(requests: list[ChatRequest]) -> list[ChatRequest]:
    return requests


def leaf_first(requests: list[ChatRequest]) -> list[ChatRequest]:
    """The same leaf prompts with their own part moved before the part the writing's leaves share."""
    leaves = [r for r in requests if r.purpose.startswith("leaf:")]
    if len(leaves) < 2:
        return requests
    users = [r.messages[-1]["content"] for r in leaves]
    shared = os.path.commonprefix(users)
    out = []
    for r in requests:
        if r.purpose.startswith("leaf:"):
            text = r.messages[-1]["content"]
            moved = {**r.messages[-1], "content": text[len(shared):] + "\n" + shared}
            r = r.model_copy(update={"messages": (*r.messages[:-1], moved)})
        out.append(r)
    return out


@dataclass(frozen=True)
class Replayed:
    """A method's calls in the order they are sent, replayed once through the prefix cache (prompt side)."""

    requests: list[ChatRequest]
    calls: list[CallTokens]

    def priced_with(self, ceiling: bool, chars: int | None) -> list[CallTokens]:
        """The calls with their completion tokens under one assumption (see the module docstring)."""
        return [replace(c, completion=completion_budget(r, ceiling=ceiling, text_chars=chars))
                for r, c in zip(self.requests, self.calls, strict=True)]


def replay(per_writing: list[list[ChatRequest]], layout: Layout) -> Replayed:
    ordered = [r for requests in per_writing for r in layout(requests)]
    return Replayed(ordered, call_tokens(ordered, [0] * len(ordered)))


def money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.2f}"


def table(rows: list[tuple[str, dict[Mode, float | None]]], first: str) -> list[str]:
    lines = [f"{first:<28}" + "".join(f"{m:>15}" for m in MODES)]
    lines += [f"{name:<28}" + "".join(f"{money(c[m]):>15}" for m in MODES) for name, c in rows]
    return lines


def ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or not b else f"{a / b:.2f}x"


def summary(per_method: dict[str, list[CallTokens]]) -> list[str]:
    lines = []
    for name, calls in per_method.items():
        prompt = sum(c.prompt for c in calls)
        cached = sum(c.cached["openai"] for c in calls)
        lines.append(f"  {name:<8} {len(calls):>6,} calls  {prompt:>12,} prompt tok  ({cached / max(prompt, 1):.0%} "
                     f"cached under OpenAI's rule)  {sum(c.completion for c in calls):>11,} completion tok")
    return lines


def sensitivity(price: Price, replayed: dict[str, Replayed]) -> list[str]:
    """The goals under each length of the judges' analyses: the one assumption the figures hang on."""
    lines = ["", "judge's text per reply field (chars)  tow batch+cached   tow / rubric cached   tow / rubric list"]
    for chars in (*REASON_LENGTHS, None):
        label = f"{chars:,}" if chars is not None else "max_tokens (dry run)"
        tow = mode_costs(price, replayed["tow"].priced_with(chars is not None, chars))
        rubric = mode_costs(price, replayed["rubric"].priced_with(chars is not None, chars))
        lines.append(f"{label:<37}{money(tow['batch+cached']):>17}{ratio(tow['cached'], rubric['cached']):>22}"
                     f"{ratio(tow['list'], rubric['list']):>20}")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--writer", default="gpt-4o-2024-11-20", help="whose release writings are judged")
    parser.add_argument("--judges", default=",".join(JUDGES), help="price-table names of the judge models")
    parser.add_argument("--completion", choices=("ceiling", "max-tokens"), default="ceiling")
    parser.add_argument("--reason-chars", type=int, default=DEFAULT_REASON_CHARS,
                        help="with --completion ceiling: every text field of a reply this many characters (at most "
                             "its maxLength; 0: each field's maxLength, unbounded fields at max_tokens) — the "
                             "length of a judge's analysis, the one unknown (the table below varies it)")
    parser.add_argument("--limit", type=int, default=None, help="first N items per task (quick look)")
    args = parser.parse_args()

    started = time.perf_counter()
    root = resolve_data_dir(args.data)
    every = load_items(root)
    items = select_items(every, limit=args.limit)
    by_id = {it.id: it for it in items}
    writings = load_release_writings(root, sorted({it.task for it in items}), [args.writer], items=every)
    pairs = [(by_id[w.item_id], w) for w in writings if w.item_id in by_id]
    ceiling = args.completion == "ceiling"
    recorded = {m: await record(m, pairs) for m in METHODS}
    replayed = {m: replay(recorded[m], shared_first) for m in METHODS}
    chars = args.reason_chars or None
    per_method = {m: replayed[m].priced_with(ceiling, chars) for m in METHODS}
    layouts = {"shared-first (ours)": shared_first, "leaf-first": leaf_first}
    per_layout = {name: replay(recorded["tow"], layout).priced_with(ceiling, chars)
                  for name, layout in layouts.items()}
    prices = load_prices()

    completion = args.completion + (f", text fields of {chars} characters" if chars and ceiling else "")
    print(f"# bench/cost.py — {len(pairs)} writings of {args.writer} ({len(items)} items), completion tokens: "
          f"{completion}")
    print(*summary(per_method), sep="\n")
    for judge in args.judges.split(","):
        price = price_for(judge, prices)
        if price is None:
            print(f"\n{judge}: not in the price table")
            continue
        costs = {m: mode_costs(price, per_method[m]) for m in METHODS}
        print(f"\n## judge {judge} (cache rule: {price.prompt_cache}, batch factor: {price.batch or 'none'})")
        print(*table([(m, costs[m]) for m in METHODS], "method"), sep="\n")
        print(f"{'tow / rubric':<28}" + "".join(f"{ratio(costs['tow'][m], costs['rubric'][m]):>15}" for m in MODES))
        layout_costs = [(name, mode_costs(price, calls)) for name, calls in per_layout.items()]
        print(*table(layout_costs, "tow prompt layout"), sep="\n")
    gpt4o = price_for("gpt-4o", prices)
    if gpt4o is not None:
        tow = mode_costs(gpt4o, per_method["tow"])
        rubric = mode_costs(gpt4o, per_method["rubric"])
        print(f"\ngoals (gpt-4o): ToW with batch + caching {money(tow['batch+cached'])} (goal <= $30); ToW / rubric "
              f"with caching {ratio(tow['cached'], rubric['cached'])} (goal <= 2x; paper 5.6x at list)")
        print(*sensitivity(gpt4o, replayed), sep="\n")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
