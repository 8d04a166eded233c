"""A batch of scored calls, run as a subprocess by the kill-and-resume test.

    python batch_worker.py BASE_URL WORKSPACE N OUT_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from howtobench.config import EndpointConfig
from howtobench.llm.client import open_client
from howtobench.llm.types import ChatRequest

SCHEMA = {"type": "object", "properties": {"score": {"enum": list(range(1, 11))}, "reason": {"type": "string"}},
          "required": ["score", "reason"]}


async def main(base_url: str, workspace: Path, n: int, out: Path) -> None:
    endpoint = EndpointConfig(model="fake-model", base_urls=(base_url,), concurrency=4, timeout_s=10)
    async with open_client(endpoint, workspace=workspace) as client:
        results = await asyncio.gather(*(
            client.chat(ChatRequest(messages=({"role": "user", "content": f"item {i}"},), response_schema=SCHEMA,
                                    purpose="batch"))
            for i in range(n)
        ))
    out.write_text(json.dumps([r.data for r in results], ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])))
