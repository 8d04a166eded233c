"""Answer a howtobench batch file on a GPU cluster with Ray Data's LLM processor over vLLM, and write the answers
back in the OpenAI Batch output format that `howtobench ... --batch-import` reads.

    howtobench judge --judge-model Qwen/Qwen3-8B ... --batch-export calls.jsonl
    python examples/ray_data_judge.py calls.jsonl answers.jsonl --model Qwen/Qwen3-8B --replicas 4
    howtobench judge --judge-model Qwen/Qwen3-8B ... --batch-import answers.jsonl

Needs `pip install "ray[data,llm]" vllm` on the cluster (not howtobench itself). Each input line's body becomes a
row of messages and sampling parameters (its JSON schema as vLLM structured output); each answered row becomes an
output line `{"id", "custom_id", "response": {"status_code": 200, "body": <chat completion>}, "error": null}`,
streamed to the output file as rows finish (howtobench matches lines by custom_id, not by order). vLLM's
processor gives the text and token counts, not a finish reason: a completion that used all its max_tokens is
marked "length" (howtobench then treats it as cut), any other "stop". tests/steps/test_ray_data.py runs this
same pipeline with an HTTP stand-in for the vLLM processor.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAMPLING_KEYS = ("temperature", "top_p", "seed", "stop")
Row = dict[str, Any]


def engine_row(row: Row) -> Row:
    """An input line (column `text`, as `ray.data.read_text` gives it) as the row vLLM's processor reads:
    `messages` and `sampling_params`, with what the output line needs carried along."""
    line = json.loads(row["text"])
    body = line["body"]
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 4096
    sampling = {key: body[key] for key in SAMPLING_KEYS if body.get(key) is not None}
    sampling["max_tokens"] = max_tokens
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    schema = spec.get("schema")
    if schema is not None:  # constrained decoding by the reply's schema, as the live endpoint would do
        sampling["structured_outputs"] = {"json": json.dumps(schema, ensure_ascii=False)}
    return {"custom_id": line["custom_id"], "model": body["model"],
            "messages": [{"role": m["role"], "content": m["content"]} for m in body["messages"]],
            "sampling_params": sampling, "max_tokens": max_tokens, "schema_name": str(spec.get("name", ""))}


def batch_output_row(row: Row) -> Row:
    """A row vLLM answered (`generated_text`, `num_input_tokens`, `num_generated_tokens`) as one line of an OpenAI
    batch output file (column `line`)."""
    completion = int(row["num_generated_tokens"])
    finish = "length" if completion >= int(row["max_tokens"]) else "stop"
    body = {"id": f"chatcmpl-{row['custom_id'][:24]}", "object": "chat.completion", "created": 0,
            "model": row["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": row["generated_text"]},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": int(row["num_input_tokens"]), "completion_tokens": completion,
                      "total_tokens": int(row["num_input_tokens"]) + completion}}
    line = {"id": f"ray-{row['custom_id'][:24]}", "custom_id": row["custom_id"],
            "response": {"status_code": 200, "request_id": f"ray-{row['custom_id'][:24]}", "body": body},
            "error": None}
    return {"line": json.dumps(line, ensure_ascii=False)}


Processor = Callable[[Any], Any]  # a Ray Dataset of engine rows -> a Dataset of output-line rows


def vllm_processor(model: str, replicas: int, tensor_parallel: int, batch_size: int,
                   max_model_len: int | None) -> Processor:
    """Ray Data's vLLM processor, with `engine_row` before it and `batch_output_row` after it."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    engine: dict[str, Any] = {"tensor_parallel_size": tensor_parallel}
    if max_model_len:
        engine["max_model_len"] = max_model_len
    config = vLLMEngineProcessorConfig(model_source=model, concurrency=replicas, batch_size=batch_size,
                                       engine_kwargs=engine)
    return build_processor(config, preprocess=engine_row, postprocess=batch_output_row)


def answer_file(input_file: Path, output_file: Path, processor: Processor) -> int:
    """Stream every line of `input_file` through `processor` into `output_file`; returns the count. Lines come
    back in the order they finish (howtobench matches them by custom_id), never all held in memory at once."""
    import ray

    count = 0
    with output_file.open("w", encoding="utf-8") as out:
        for row in processor(ray.data.read_text(str(input_file))).iter_rows():
            out.write(row["line"] + "\n")
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description="Answer a howtobench batch file with Ray Data + vLLM.")
    parser.add_argument("input_file", type=Path)
    parser.add_argument("output_file", type=Path)
    parser.add_argument("--model", required=True, help="the model of the file's lines (--judge-model / --model)")
    parser.add_argument("--replicas", type=int, default=1, help="vLLM engine replicas (one per GPU group)")
    parser.add_argument("--tensor-parallel", type=int, default=1, help="GPUs per replica")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-model-len", type=int, default=None)
    args = parser.parse_args()
    processor = vllm_processor(args.model, args.replicas, args.tensor_parallel, args.batch_size, args.max_model_len)
    count = answer_file(args.input_file, args.output_file, processor)
    print(f"{count} answers written to {args.output_file}")


if __name__ == "__main__":
    main()
