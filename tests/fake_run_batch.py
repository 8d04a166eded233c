"""An emulated `vllm run-batch -i IN -o OUT --model M`: every line of an OpenAI Batch input file answered by the
fake server's logic (a handler: request body -> `Reply`) and written as vLLM writes its output file — one line
per input line, in input order: `{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`
(vllm/entrypoints/openai/run_batch.py; an error line has status 400 and no body, its message in `error`).

    python tests/fake_run_batch.py -i calls.jsonl -o answers.jsonl --model judge-model
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fake_server import Reply, default_handler  # noqa: E402

Handler = Callable[[dict[str, Any]], Reply]


def completion(body: dict[str, Any], reply: Reply, model: str, number: int) -> dict[str, Any]:
    """A chat completion as vLLM's OpenAI server returns it (token counts approximated as the fake server's)."""
    prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
    usage = {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": max(1, len(reply.content) // 4)}
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                         "finish_reason": reply.finish_reason or "stop"}],
            "usage": {**usage, "total_tokens": sum(usage.values())}}


def output_line(request: dict[str, Any], handler: Handler, model: str, number: int) -> dict[str, Any]:
    reply = handler(request["body"])
    if reply.status != 200:
        return {"id": f"vllm-{number}", "custom_id": request["custom_id"],
                "response": {"status_code": reply.status, "request_id": f"vllm-batch-{number}", "body": None},
                "error": reply.error_message or "request failed"}
    return {"id": f"vllm-{number}", "custom_id": request["custom_id"],
            "response": {"status_code": 200, "request_id": f"vllm-batch-{number}",
                         "body": completion(request["body"], reply, model, number)},
            "error": None}


def run_batch(input_file: Path, output_file: Path, model: str, handler: Handler = default_handler) -> int:
    """Answer every line of `input_file` into `output_file`; returns how many lines were answered."""
    lines = [json.loads(text) for text in input_file.read_text(encoding="utf-8").splitlines() if text.strip()]
    with output_file.open("w", encoding="utf-8") as out:
        for number, request in enumerate(lines):
            out.write(json.dumps(output_line(request, handler, model, number), ensure_ascii=False) + "\n")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-i", "--input-file", type=Path, required=True)
    parser.add_argument("-o", "--output-file", type=Path, required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    from judge_replies import server_handler

    run_batch(args.input_file, args.output_file, args.model, server_handler())


if __name__ == "__main__":
    main()
