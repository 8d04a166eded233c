"""What does turning llama.cpp's extra buffer types off cost? (issue 12: the embedded model on every x86-64 CPU)

    python bench/local_repack.py [--rounds 3] [--prompt-chars 1500] [--gen-tokens 64]

The embedded server loads its weights without extra buffer types (`howtobench.llm.local_server`): no CPU_REPACK
(weights re-laid for AVX2 / AVX-512 kernels) and no AMX buffer — the AMX one crashes on some Sapphire Rapids
machines. This measures the speed that costs on the machine at hand, side by side on the same server settings:
each round starts one server with extra buffers off (our default) and one with llama.cpp's default (on), in
alternating order, and times with our call cache off

  prompt  one completion of a long prompt (a release writing, `--prompt-chars` characters) with max_tokens 1:
          prompt evaluation speed (tokens/s)
  decode  a short prompt answered with `--gen-tokens` tokens (temperature 0, no stop): generation speed

Each prompt starts with the round number, so llama.cpp cannot reuse a previous prompt's KV cache. Do not run
it on an AMX machine with extra buffers on (the point of the fix): the script refuses when /proc/cpuinfo says
amx. It prints the load log's buffer lines per variant and the medians; measure on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings
from howtobench.llm.client import open_client
from howtobench.llm.local import local_endpoint_config, local_server
from howtobench.llm.types import ChatRequest, SamplingParams

BUFFER_LINE = re.compile(r"^.*model buffer size.*$", re.MULTILINE)


def long_text(root: Path, chars: int) -> str:
    """The first release writing with at least `chars` characters, cut to `chars`."""
    items = load_items(root, ["guide"])
    for writing in load_release_writings(root, ["guide"], ("gpt-4o-2024-11-20",), items=items):
        if len(writing.output) >= chars:
            return writing.output[:chars]
    raise SystemExit(f"no release writing of {chars} characters")


async def one_variant(extra: bool, text: str, round_no: int, gen_tokens: int) -> dict[str, float | str]:
    """Start a server, time one long-prompt call and one decode call, stop it."""
    started = time.perf_counter()
    async with local_server(quiet=True, extra_buffers=extra) as server:
        ready_s = time.perf_counter() - started
        buffers = "; ".join(line.split(":", 1)[-1].strip() for line in BUFFER_LINE.findall(server.log.read_text()))
        with tempfile.TemporaryDirectory() as ws:
            async with open_client(local_endpoint_config(server), workspace=Path(ws), cache_mode="off") as client:
                t0 = time.perf_counter()
                prompt = await client.chat(ChatRequest(
                    messages=({"role": "user", "content": f"{round_no}. 请概括下文。\n{text}"},),
                    sampling=SamplingParams(temperature=0.0, max_tokens=1)))
                t1 = time.perf_counter()
                decode = await client.chat(ChatRequest(
                    messages=({"role": "user", "content": f"{round_no}. 写一篇关于秋天的长文。"},),
                    sampling=SamplingParams(temperature=0.0, max_tokens=gen_tokens)))
                t2 = time.perf_counter()
    return {"ready_s": ready_s, "prompt_tok_s": prompt.usage.prompt_tokens / (t1 - t0),
            "decode_tok_s": decode.usage.completion_tokens / (t2 - t1), "buffers": buffers}


def cpu_has_amx() -> bool:
    info = Path("/proc/cpuinfo")
    return info.exists() and " amx" in info.read_text()


async def run(rounds: int, text: str, gen_tokens: int) -> dict[bool, list[dict[str, float | str]]]:
    results: dict[bool, list[dict[str, float | str]]] = {False: [], True: []}
    for r in range(rounds):
        for extra in ((False, True) if r % 2 == 0 else (True, False)):
            got = await one_variant(extra, text, r, gen_tokens)
            results[extra].append(got)
            print(f"  round {r + 1} extra buffers {'on ' if extra else 'off'}: ready {got['ready_s']:5.1f} s, "
                  f"prompt {got['prompt_tok_s']:6.1f} tok/s, decode {got['decode_tok_s']:5.1f} tok/s", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark root (default: $HOWTOBENCH_DATA)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompt-chars", type=int, default=1500)
    parser.add_argument("--gen-tokens", type=int, default=64)
    args = parser.parse_args()
    if cpu_has_amx():
        raise SystemExit("this CPU has AMX: llama.cpp's extra buffers may crash here (that is the fix); not measured")
    text = long_text(resolve_data_dir(args.data), args.prompt_chars)
    results = asyncio.run(run(args.rounds, text, args.gen_tokens))
    print()
    for extra in (False, True):
        runs = results[extra]
        prompt = statistics.median(float(r["prompt_tok_s"]) for r in runs)
        decode = statistics.median(float(r["decode_tok_s"]) for r in runs)
        label = "on  (llama.cpp default)" if extra else "off (howtobench default)"
        print(f"extra buffers {label}: prompt {prompt:6.1f} tok/s, decode {decode:5.1f} tok/s (medians of {len(runs)})")
        print(f"  load log: {runs[0]['buffers']}")
    off, on = results[False], results[True]
    for key, name in (("prompt_tok_s", "prompt"), ("decode_tok_s", "decode")):
        ratio = statistics.median(float(r[key]) for r in off) / statistics.median(float(r[key]) for r in on)
        print(f"{name}: off runs at {ratio:.2f}x the speed of on")


if __name__ == "__main__":
    main()
