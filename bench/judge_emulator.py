"""A judge that behaves like an inference server: time from the tokens a call brings, a batch limit, a prefix cache.

An OpenAI-compatible loopback server (tests/fake_server.py's HTTP side and tests/judge_replies.py's deterministic
ToW replies) whose replies are timed by a step loop shaped like vLLM's continuous batching:

- at most `--batch` sequences run at once (vLLM's `max_num_seqs`, default 256); the rest wait, first come first
  served;
- every step each running sequence that has finished its prefill decodes one token, and up to `--chunk` prompt
  tokens are computed (chunked prefill, vLLM's `max_num_batched_tokens`): those of the sequences already in
  prefill first, oldest first, then of waiting sequences, admitted to the batch while the step's budget lasts (as
  vLLM's scheduler does: a long prompt enters when the budget reaches it); a step takes `--decode-step-ms` plus
  its prefill tokens at `--prefill-rate`;
- prompts are cut into tokens of 2 characters (about what a Qwen/Llama-3 tokenizer gives for Chinese prose) and
  into blocks of 16 tokens; as in vLLM's automatic prefix caching a block is found in the cache by the hash of
  itself and every block before it, only full blocks are cached, a block is cached once the step that computed
  it is done, a new sequence reuses the longest cached run of blocks from its start (looked up when it is
  admitted), and the least recently used blocks are dropped past `--cache-blocks`;
- each judge reply is `--completion-tokens` tokens long (its text is the fake's deterministic JSON).

Counters (GET /stats, zeroed by POST /stats/reset): calls, prompt tokens, prompt tokens computed and reused, the
window from the first call's arrival to the last reply on the emulated clock (`Engine.now`: a step counts its
emulated seconds, idle time its wall time x the speedup, so the emulator's own Python time is not the judge's),
the busy share: the mean share of the batch's sequences running over that window (a 64-slot fake judge's
calls/window/capacity, generalized), and the capacity share: the window the same calls get when every one waits
from the start (`ideal_run`: an ideal client) over the window they got. The busy share of a finite phase stays
under 1 even for the ideal client (the batch fills at chunked prefill's pace and empties over the last decodes);
the capacity share is 1 for it, so it says what the client itself cost.

Calibration, for a 70B-class judge on one GPU node (Llama 3.1 70B, tensor parallel over 4 x H100 80GB, vLLM
0.6.0 with multi-step scheduling, max-num-seqs 256): median time per output token 61.10 ms at 5,000 prompts sent
at once, 3,542.88 output tokens/s (LambdaLabsML/vllm-benchmark, benchmark_v0.md, "vLLM v0.5.4 v.s. v0.6.0"
table) — so `--decode-step-ms 61` and `--batch 256`. The prefill rate is derived, not measured there: a 70B model
costs 2 x 70.6e9 FLOPs per prompt token, 4 H100s offer 4 x 989 dense BF16 TFLOPS, and prefill runs at about 40 %
of that (typical model-FLOPs utilization of long prefills): ~11,000 tokens/s (`--prefill-rate 11000`). The step
time is held at the full-batch figure whatever the batch (decode is bound by reading the weights, so a step costs
about the same with fewer sequences): throughput follows the batch's occupancy, which is what the busy share
measures. `--speedup` divides every time (the ratios do not change): 61 ms steps at --speedup 40 are 1.5 ms.

    python bench/judge_emulator.py [--port 0] [--speedup 40]    # prints "PORT <n>"
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import heapq
import sys
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_server import FakeServer, Recorded, Reply, _write  # noqa: E402
from judge_replies import server_handler  # noqa: E402

CHARS_PER_TOKEN = 2
BLOCK_TOKENS = 16


@dataclass
class Rates:
    """The emulated engine's settings (see the module docstring for their published sources)."""

    batch: int = 256
    decode_step_s: float = 0.061
    prefill_rate: float = 11_000.0
    chunk: int = 2048
    cache_blocks: int = 30_000  # ~ 480k tokens of KV: what 4 x 80 GB hold beside a 70B model's weights (BF16)
    completion_tokens: int = 200
    speedup: float = 40.0


@dataclass
class Seq:
    """One call in the engine."""

    blocks: list[str]  # the chained hashes of its full blocks
    tokens: int
    done: asyncio.Future[None] | None  # None in `ideal_run`'s replay: nobody waits
    computed: int = 0  # prompt tokens computed or reused so far
    reused: int = 0
    admitted: bool = False


@dataclass
class Counters:
    calls: int = 0
    prompt_tokens: int = 0
    computed: int = 0
    reused: int = 0
    busy_s: float = 0.0  # sum over steps of (running / batch) x step time (emulated seconds)
    first: float | None = None  # emulated clock (`Engine.now`) at the first call's arrival
    last: float = 0.0  # and at the last call's end


def blocks_of(text: str) -> tuple[list[str], int]:
    """The chained hashes of the text's full blocks of tokens, and its tokens."""
    tokens = -(-len(text) // CHARS_PER_TOKEN)
    step = BLOCK_TOKENS * CHARS_PER_TOKEN
    hashes, previous = [], b""
    for start in range(0, (tokens // BLOCK_TOKENS) * step, step):
        previous = hashlib.blake2b(previous + text[start:start + step].encode(), digest_size=12).digest()
        hashes.append(previous.hex())
    return hashes, tokens


def prompt_text(body: dict[str, Any]) -> str:
    """The prompt as a chat template lays it out (role markers, then the content, message by message)."""
    return "".join(f"<|{m.get('role')}|>\n{m.get('content', '')}\n" for m in body.get("messages", []))


class Engine:
    """The step loop: admission up to the batch, chunked prefill oldest first, one token per running sequence."""

    def __init__(self, rates: Rates) -> None:
        self.rates = rates
        self.counters = Counters()
        self.cache: OrderedDict[str, None] = OrderedDict()
        self._waiting: deque[Seq] = deque()
        self._prefill: deque[Seq] = deque()
        self._decoding: list[tuple[int, int, Seq]] = []  # (finish step, id, seq)
        self._step, self._ids = 0, 0
        self.arrivals: list[tuple[list[str], int]] = []  # (blocks, tokens) of each call, in arrival order
        self.clock = 0.0  # emulated seconds: see `now`
        self._idle_from: float | None = time.perf_counter()  # wall time the engine went idle; None while it steps
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def run(self, body: dict[str, Any]) -> tuple[int, int]:
        """Run one call to its end; (prompt tokens, reused prompt tokens)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())
        if self._idle_from is not None:  # idle until this arrival: the wake-up that follows is not the judge's time
            self.clock, self._idle_from = self.now(), None
        if self.counters.first is None:
            self.counters.first = self.now()
        blocks, tokens = blocks_of(prompt_text(body))
        self.arrivals.append((blocks, tokens))
        seq = Seq(blocks, tokens, asyncio.get_running_loop().create_future())
        self._waiting.append(seq)
        self._wake.set()
        await seq.done
        return seq.tokens, seq.reused

    def _admit(self, seq: Seq) -> None:
        """A waiting sequence joins the batch: the cached run of blocks from its start is looked up now."""
        hit = 0
        for h in seq.blocks:
            if h not in self.cache:
                break
            self.cache.move_to_end(h)
            hit += 1
        seq.reused = seq.computed = min(hit * BLOCK_TOKENS, seq.tokens - 1)  # the last token is always computed
        c = self.counters
        c.calls, c.prompt_tokens, c.reused = c.calls + 1, c.prompt_tokens + seq.tokens, c.reused + seq.reused
        self._prefill.append(seq)

    def _cache_computed(self, seqs: list[Seq]) -> None:
        for seq in seqs:
            for h in seq.blocks[: seq.computed // BLOCK_TOKENS]:
                self.cache[h] = None
                self.cache.move_to_end(h)
        while len(self.cache) > self.rates.cache_blocks:
            self.cache.popitem(last=False)

    def _schedule(self) -> tuple[int, list[Seq]]:
        """One step's prefill, as vLLM's scheduler fills its token budget: the sequences already in prefill first,
        oldest first, then waiting ones admitted while budget and batch last (so a sequence is looked up in the
        prefix cache when the budget reaches it, not when it arrived). Returns the prompt tokens computed and the
        sequences that computed some (their full blocks are cached once the step is done)."""
        budget, touched = self.rates.chunk, []
        for seq in list(self._prefill):
            if not budget:
                break
            budget -= self._compute(seq, budget)
            touched.append(seq)
        while budget and self._waiting and len(self._prefill) + len(self._decoding) < self.rates.batch:
            seq = self._waiting.popleft()
            self._admit(seq)
            budget -= self._compute(seq, budget)
            touched.append(seq)
        return self.rates.chunk - budget, touched

    def _compute(self, seq: Seq, budget: int) -> int:
        take = min(budget, seq.tokens - seq.computed)
        seq.computed += take
        self.counters.computed += take
        if seq.computed >= seq.tokens:
            self._prefill.remove(seq)
            self._ids += 1
            heapq.heappush(self._decoding, (self._step + self.rates.completion_tokens, self._ids, seq))
        return take

    def now(self) -> float:
        """The emulated clock: a step counts its emulated seconds, idle time its wall time x the speedup. Why not
        the wall clock: the emulator's own Python time around each step (~1 ms) is no judge's time, and at 6 ms
        steps it would lengthen every window by a sixth whatever the client does."""
        idle = 0.0 if self._idle_from is None else (time.perf_counter() - self._idle_from) * self.rates.speedup
        return self.clock + idle

    async def _loop(self) -> None:
        while True:
            if not (self._prefill or self._decoding or self._waiting):
                self._wake.clear()
                self._idle_from = time.perf_counter()  # counted into the clock by the call that wakes it (`run`)
                await self._wake.wait()
                continue
            step_s, touched = self._run_step()
            await asyncio.sleep(step_s / self.rates.speedup)
            self.clock += step_s
            for seq in self._end_step(touched):
                self.counters.last = self.clock  # its reply is sent now (the caller's own wake-up is not the judge's)
                if seq.done is not None and not seq.done.done():
                    seq.done.set_result(None)

    def _run_step(self) -> tuple[float, list[Seq]]:
        """Schedule one step: its emulated seconds, and the sequences that computed prompt tokens in it."""
        prefilled, touched = self._schedule()
        running = len(self._prefill) + len(self._decoding)
        step_s = self.rates.decode_step_s + prefilled / self.rates.prefill_rate
        self.counters.busy_s += step_s * running / self.rates.batch
        return step_s, touched

    def _end_step(self, touched: list[Seq]) -> list[Seq]:
        """The step is done: its computed blocks cached; returns the sequences that finished decoding."""
        self._cache_computed(touched)
        self._step += 1
        finished = []
        while self._decoding and self._decoding[0][0] <= self._step:
            finished.append(heapq.heappop(self._decoding)[2])
        return finished

    def stats(self) -> dict[str, Any]:
        c = self.counters
        window = c.last - c.first if c.first is not None else 0.0
        ideal, ideal_busy = ideal_run(self.rates, self.arrivals)
        return {"calls": c.calls, "prompt_tokens": c.prompt_tokens, "computed": c.computed, "reused": c.reused,
                "window_s": window, "busy_share": c.busy_s / window if window else 0.0,
                "ideal_window_s": ideal, "ideal_busy_share": ideal_busy,
                "capacity_share": ideal / window if window else 0.0}

    def reset(self) -> None:
        """Zero the counters and empty the prefix cache (the next side starts cold)."""
        self.counters = Counters()
        self.cache.clear()
        self.arrivals = []


def ideal_run(rates: Rates, arrivals: list[tuple[list[str], int]]) -> tuple[float, float]:
    """The emulated seconds the engine needs for these calls, in this order, when every one of them waits from the
    start with the prefix cache cold — what an ideal client (all calls sent at once, no time of its own) gets — and
    the busy share over them.

    Why: the busy share (the batch's occupancy) cannot reach 1 for a finite phase even so: the batch fills at the
    pace of chunked prefill and empties over the last calls' decode (~0.85-0.88 for 2,280 ToW calls of 40 x 8
    release writings). The reward phase's window against this one is the share of the judge's capacity a
    client realised (`capacity_share`)."""
    engine = Engine(rates)
    engine._waiting.extend(Seq(blocks, tokens, None) for blocks, tokens in arrivals)
    elapsed = 0.0
    while engine._prefill or engine._decoding or engine._waiting:
        step_s, touched = engine._run_step()
        elapsed += step_s
        engine._end_step(touched)
    return elapsed, engine.counters.busy_s / elapsed if elapsed else 0.0


class EmulatorServer(FakeServer):
    """FakeServer's HTTP, with each chat call timed by the engine; GET /stats, POST /stats/reset."""

    def __init__(self, rates: Rates) -> None:
        super().__init__(server_handler())
        self.rates = rates
        self.engine: Engine | None = None

    async def _respond(self, request: Recorded, writer: asyncio.StreamWriter) -> bool:
        if self.engine is None:
            self.engine = Engine(self.rates)
        path = request.path.rstrip("/")
        if path == "/stats" and request.method == "GET":
            await _write(writer, 200, self.engine.stats())
            return True
        if path == "/stats/reset" and request.method == "POST":
            self.engine.reset()
            await _write(writer, 200, {"ok": True})
            return True
        return await super()._respond(request, writer)

    async def _chat(self, body: dict[str, Any], writer: asyncio.StreamWriter, digest: str = "") -> bool:
        assert self.engine is not None
        reply = self.handler(body)
        reply = reply if isinstance(reply, Reply) else Reply.json(reply)
        prompt, reused = await self.engine.run(body)
        reply.usage = {"prompt_tokens": prompt, "completion_tokens": self.rates.completion_tokens,
                       "prompt_tokens_details": {"cached_tokens": reused}}
        await _write(writer, 200, self._completion(body, reply))
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Rates()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--decode-step-ms", type=float, default=defaults.decode_step_s * 1000)
    parser.add_argument("--prefill-rate", type=float, default=defaults.prefill_rate)
    parser.add_argument("--chunk", type=int, default=defaults.chunk)
    parser.add_argument("--cache-blocks", type=int, default=defaults.cache_blocks)
    parser.add_argument("--completion-tokens", type=int, default=defaults.completion_tokens)
    parser.add_argument("--speedup", type=float, default=defaults.speedup)
    args = parser.parse_args()
    rates = Rates(args.batch, args.decode_step_ms / 1000, args.prefill_rate, args.chunk, args.cache_blocks,
                  args.completion_tokens, args.speedup)
    server = EmulatorServer(rates)
    server.requests = _Discard()
    server.log = _Discard()
    asyncio.run(server.serve(args.port, lambda port: print(f"PORT {port}", flush=True)))


class _Discard(list):  # type: ignore[type-arg]
    def append(self, _item: Any) -> None:
        pass


if __name__ == "__main__":
    main()
