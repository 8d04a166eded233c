"""Throughput of the client layer against a fake server with fixed capacity (a benchmark, not a test).

The fake server runs in its own process (64 slots x 100 ms latency = 640 calls/s capacity), so
the client's CPU time is measured alone. Prints calls/s, the ratio to capacity and the client's
CPU time per call (process time of this process / calls). Goal: ratio >= 0.9, << 1 ms CPU/call.

    python bench/throughput.py [--calls 3000] [--concurrency 64|auto] [--latency 0.1] [--cache off|on] [--reference]

`--reference` also times a bare aiohttp loop and a minimal raw asyncio loop against the same server:
on a loaded machine only the side-by-side ratios mean something (DESIGN.md), so compare them, and
re-run on an idle machine for the figures of record. Every loop runs on the commands' event loop
(`howtobench.event_loop.run`: asyncio's own).

`--concurrency auto` (the default of every command since issue 37) against 64 fixed, in turn, 3,000 calls, the
machine loaded (load average 6.1-6.4 on 2 cores, other agents' jobs): auto 0.669 / 0.776 of capacity, 64 fixed
0.728 / 0.600; client CPU 0.61-0.68 against 0.55-0.74 ms/call — the same within this machine's noise. auto ended
at 106 and 229 calls in flight: a client that is itself the bottleneck measures its own queue in its latency
from the first window on, so the latency rule does not hold it near the server's 64 (the server's queue takes the
rest; throughput is unchanged).

Figures of record, idle machine (load average 0.4 on 2 cores), `--calls 3000 --concurrency auto --reference`:
howtobench client 0.912 of capacity, 0.646 ms CPU/call (auto ended at 134 in flight); bare aiohttp 0.930, 0.292
ms/call; minimal loop 0.964, 0.071 ms/call.

Issue 37's end, each loop under the commands' collector setting (`loaded_data_frozen`), idle machine (load average
0.6-0.8), two runs: client 0.930 / 0.896 of capacity at 0.504 / 0.625 ms CPU per call (auto ended at 140); bare
aiohttp 0.947 / 0.940 at 0.247 / 0.260; minimal loop 0.959 / 0.958 at 0.078 / 0.066. Against an in-memory transport
the client costs 0.17 ms per call (0.20 with the cache on): keys, body, reply parse, accounting, the call log's row;
over HTTP another ~0.1 ms goes to the call log's writer thread (its commits and its turns at the GIL: the client
without writes measured 0.48-0.49 ms per call). Not halved: half of 0.61 is at bare aiohttp's own floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_server import FakeServerProcess  # noqa: E402
from howtobench.config import EndpointConfig  # noqa: E402
from howtobench.event_loop import loaded_data_frozen, run  # noqa: E402
from howtobench.llm.client import CacheMode, open_client  # noqa: E402
from howtobench.llm.types import ChatRequest  # noqa: E402

PROMPT = "请根据下面的写作要求评价这篇文章。" * 20


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc); 0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(base_url: str, calls: int, concurrency: int | str, cache: CacheMode,
                workspace: Path) -> tuple[float, float]:
    endpoint = EndpointConfig.model_validate({"model": "fake-model", "base_urls": (base_url,),
                                              "concurrency": concurrency, "timeout_s": 30})  # 64, auto, auto:N
    requests = [ChatRequest(messages=({"role": "user", "content": f"{PROMPT} #{i}"},), purpose="bench")
                for i in range(calls)]
    async with open_client(endpoint, workspace=workspace, cache_mode=cache) as client:
        await client.chat(ChatRequest(messages=({"role": "user", "content": "warm-up"},)))
        wall, cpu = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*(client.chat(r) for r in requests))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if client.levels is not None:
            print(f"auto concurrency ended at {client.pool.limit()} calls in flight")
    failed = sum(not r.ok for r in results)
    if failed:
        print(f"warning: {failed} calls failed")
    return wall, cpu


async def reference(port: int, calls: int, concurrency: int) -> tuple[float, float]:
    """The floor: a minimal keep-alive loop with no client features, so a busy machine's figures can be judged."""
    body = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": PROMPT}]},
                      ensure_ascii=False).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    left = [calls]

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while left[0] > 0:
            left[0] -= 1
            writer.write(head + body)
            raw = await reader.readuntil(b"\r\n\r\n")
            length = next(int(h.split(b":")[1]) for h in raw.split(b"\r\n") if h.lower().startswith(b"content-length"))
            json.loads(await reader.readexactly(length))
        writer.close()

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - wall, time.process_time() - cpu


async def bare_aiohttp(base_url: str, calls: int, concurrency: int) -> tuple[float, float]:
    """The same loop over one bare aiohttp session: what the HTTP library alone allows here."""
    import aiohttp

    body = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": PROMPT}]},
                      ensure_ascii=False).encode()
    url, left = base_url + "/chat/completions", [calls]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def worker() -> None:
            while left[0] > 0:
                left[0] -= 1
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                    json.loads(await resp.read())

        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - wall, time.process_time() - cpu


def batch(main: Coroutine[Any, Any, tuple[float, float]]) -> tuple[float, float]:
    """Run one loop as the commands run a batch (`loaded_data_frozen`: the collector's setting), each side alike."""
    with loaded_data_frozen():
        return run(main)


def report(label: str, calls: int, wall: float, cpu: float, server_cpu: float, capacity: float) -> None:
    rate = calls / wall
    print(f"{label}: {rate:.0f} calls/s  ratio to capacity: {rate / capacity:.3f}  "
          f"client CPU: {cpu / calls * 1000:.3f} ms/call  (server CPU: {server_cpu / calls * 1000:.3f} ms/call)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", default="64", help="64 (fixed), auto or auto:N (the bare aiohttp and "
                        "minimal loops take 64 for auto)")
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--cache", choices=["off", "on"], default="off")
    parser.add_argument("--workspace-dir", type=Path, default=None, help="where the temporary workspace goes")
    parser.add_argument("--reference", action="store_true",
                        help="also time a bare aiohttp loop and a minimal keep-alive loop (what this machine allows)")
    args = parser.parse_args()
    capacity = args.slots / args.latency
    print(f"calls: {args.calls}  concurrency: {args.concurrency}  "
          f"server: {args.slots} slots x {args.latency * 1000:g} ms = {capacity:g} calls/s  cache: {args.cache}")
    with FakeServerProcess(latency=args.latency, capacity=args.slots) as server, \
            tempfile.TemporaryDirectory(dir=args.workspace_dir) as tmp:
        server_cpu = process_cpu_s(server.pid)
        wall, cpu = batch(drive(server.base_url, args.calls, args.concurrency, args.cache, Path(tmp)))
        report("howtobench client", args.calls, wall, cpu, process_cpu_s(server.pid) - server_cpu, capacity)
        if args.reference:
            server_cpu = process_cpu_s(server.pid)
            fixed = int(args.concurrency) if args.concurrency.isdigit() else args.slots
            wall, cpu = batch(bare_aiohttp(server.base_url, args.calls, fixed))
            report("bare aiohttp     ", args.calls, wall, cpu, process_cpu_s(server.pid) - server_cpu, capacity)
            server_cpu = process_cpu_s(server.pid)
            wall, cpu = batch(reference(server.port, args.calls, fixed))
            report("minimal loop     ", args.calls, wall, cpu, process_cpu_s(server.pid) - server_cpu, capacity)
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
