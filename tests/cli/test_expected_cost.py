"""The estimate a user can believe (issue 23, 14): the expected cost first, the upper bound beside it, in the dry run
and the live first screen alike, time included; --confirm-above and --max-cost keep counting the bound."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from howtobench.cli.main import app
from howtobench.config import DEFAULT_MAX_CONCURRENCY
from howtobench.data.loader import load_items, load_release_writings, select_items
from howtobench.llm.accounting import load_prices, price_for
from howtobench.llm.cache import CallRecord, CallStore, utc_now
from howtobench.llm.expected import TYPICAL_REASON_CHARS, ReplySizes, expected_completions, reply_sizes
from howtobench.llm.pricing import mode_costs, reply_ceiling
from howtobench.llm.types import ChatRequest, SamplingParams

DEAD = "http://127.0.0.1:9/v1"
JUDGE = "gpt-4o-2024-11-20"
ROOT = Path(__file__).resolve().parents[2]


def bench_cost() -> ModuleType:
    """bench/cost.py, the benchmark that prices a whole judgment (not a package: loaded by path)."""
    spec = importlib.util.spec_from_file_location("bench_cost", ROOT / "bench" / "cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_cost"] = module
    spec.loader.exec_module(module)
    return module


def run_dry(bench_root: Path, tmp_path: Path, *extra: str) -> str:
    args = ["run", "--data", str(bench_root), "--limit", "12", "--base-url", DEAD, "--model", "my-model",
            "--judge-base-url", DEAD, "--judge-model", JUDGE, "--run-dir", str(tmp_path / "run"), "--workspace",
            str(tmp_path / "ws"), "--no-progress", *extra]
    result = CliRunner().invoke(app, args)
    return result.output + (str(result.exception) if result.exception else "")


def dollars(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, (pattern, text)
    return float(found.group(1).replace(",", ""))


def test_the_dry_run_shows_the_expected_cost_near_bench_cost(bench_root: Path, tmp_path: Path) -> None:
    """The dry run showed only the upper bound (every reply at 4,096 tokens: ~$465 for judging one model with GPT-4o
    on the whole benchmark, against bench/cost.py's ~$74) and no time."""
    out = run_dry(bench_root, tmp_path, "--dry-run")
    judge = out[out.index(f"judge · {JUDGE}"):]
    expected = dollars(r"expected ~\$([\d.,]+) \(~[\d,]+ completion tokens: JSON replies with ~400-character", judge)
    bound = dollars(r"at most ~\$([\d.,]+), by purpose:", judge)
    assert bound > 3 * expected  # the bound stays beside it, the figure --confirm-above counts
    # no concurrency flag: auto, whose time is given at its cap (per base URL; config.DEFAULT_MAX_CONCURRENCY)
    at_once = f"{DEFAULT_MAX_CONCURRENCY} writer / {DEFAULT_MAX_CONCURRENCY} judge calls at once"
    assert re.search(rf"\ntime: expected ~?[\w ]+, at most ~[\w ]+ with {at_once}", out), out
    # bench/cost.py on the same items (the release's GPT-4o writings, replies of 200-character reasons, list price)
    cost = bench_cost()
    every = load_items(bench_root)
    items = select_items(every, limit=12)
    by_id = {it.id: it for it in items}
    writings = load_release_writings(bench_root, ["completion", "guide", "open"], [JUDGE], items=every)
    pairs = [(by_id[w.item_id], w) for w in writings if w.item_id in by_id]
    replayed = cost.replay(asyncio.run(cost.record("tow", pairs)), cost.shared_first)
    price = price_for(JUDGE, load_prices())
    assert price is not None
    reference = mode_costs(price, replayed.priced_with(True, cost.DEFAULT_REASON_CHARS))["list"]
    assert reference is not None and 1 / 1.5 <= expected / reference <= 1.5, (expected, reference)


def test_confirm_above_counts_the_bound_not_the_expected(bench_root: Path, tmp_path: Path) -> None:
    plan = run_dry(bench_root, tmp_path, "--dry-run")
    expected = dollars(r"to configured endpoints: [\d,]+ calls, expected ~\$([\d.,]+)", plan)
    bound = dollars(r"to configured endpoints: [\d,]+ calls, expected ~\$[\d.,]+, at most ~\$([\d.,]+)", plan)
    between = f"{(expected + bound) / 2:.2f}"
    out = run_dry(bench_root, tmp_path, "--confirm-above", between)
    assert f"above --confirm-above ${between}" in out and "nothing was sent" in out
    first = out.splitlines()
    judge = next(k for k, line in enumerate(first) if line.strip().startswith(f"judge · {JUDGE}:"))
    assert re.fullmatch(r"expected ~\$[\d.,]+ \(at most ~\$[\d.,]+\)", first[judge + 1].strip())
    assert re.search(r"total: [\d,]+ calls, expected ~\$[\d.,]+, at most ~\$[\d.,]+ \+ unknown \(my-model", out)
    assert "time: expected " in out and ", at most " in out


def _request(purpose: str, schema: bool = True) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": "x"},), purpose=purpose,
                       sampling=SamplingParams(max_tokens=4096),
                       response_schema={"type": "object", "properties": {"analysis": {"type": "string"},
                                                                         "score": {"enum": [1, 2, 3]}}}
                       if schema else None)


def test_expected_reply_sizes_come_from_the_judges_earlier_calls(tmp_path: Path) -> None:
    store = CallStore.open(tmp_path)
    for tokens, status, cached in ((100, "ok", False), (300, "ok", False), (900, "failed", False), (50, "ok", True)):
        store.record(CallRecord(key=f"k{tokens}", run_id="r", purpose="leaf:logic", model=JUDGE, status=status,
                                started_at=utc_now(), completion_tokens=tokens, from_cache=cached))
    store.record(CallRecord(key="o", run_id="r", purpose="leaf:logic", model="other", status="ok",
                            started_at=utc_now(), completion_tokens=4000))
    store.close()
    sizes = reply_sizes(tmp_path, JUDGE)
    assert sizes == ReplySizes(JUDGE, {"leaf:logic": 200.0}, 2)  # fresh answered calls of this model only
    requests = [_request("leaf:logic"), _request("leaf:plots"), _request("generation", schema=False),
                _request("generation", schema=False)]
    typical_reply = reply_ceiling(requests[1].response_schema or {}, TYPICAL_REASON_CHARS)  # 400-character reasons
    assert TYPICAL_REASON_CHARS == 400 and typical_reply == 283
    # the judge's own mean; a leaf it never answered: a typical reply; a writing: the caller's guess, else max_tokens
    assert expected_completions(requests, sizes, [None, None, 1500, None]) == [200, typical_reply, 1500, 4096]
    assert reply_sizes(tmp_path / "none", JUDGE) == ReplySizes(JUDGE)


def test_the_dry_run_says_when_it_uses_the_judges_own_replies(bench_root: Path, tmp_path: Path) -> None:
    store = CallStore.open(tmp_path / "ws")
    for purpose in ("weights", "leaf:emotion", "leaf:impression", "leaf:language", "leaf:logic",
                    "leaf:opening_ending", "leaf:paragraphing", "leaf:plots"):
        store.record(CallRecord(key=purpose, run_id="r", purpose=purpose, model=JUDGE, status="ok",
                                started_at=utc_now(), completion_tokens=120))
    store.close()
    out = run_dry(bench_root, tmp_path, "--dry-run", "--no-preflight")
    assert re.search(r"expected ~\$[\d.,]+ \(~[\d,]+ completion tokens: reply sizes of 8 earlier calls of "
                     rf"{JUDGE} in the call log\)", out), out


@pytest.mark.parametrize("extra", [[], ["--batch"]])
def test_the_live_first_screen_leads_with_the_expected_cost(bench_root: Path, tmp_path: Path,
                                                            extra: list[str]) -> None:
    out = run_dry(bench_root, tmp_path, "--confirm-above", "0", *extra)
    assert out.lstrip().startswith("howtobench run — estimate before the first call")
    assert re.search(r"judge · gpt-4o-2024-11-20: [\d,]+ calls, ~[\d,]+ prompt \+ ~[\d,]+ \(at most ~[\d,]+\) "
                     r"completion tokens\n\s+expected ~\$", out), out
