"""What batch files cost on our side: a ToW judgment of the release writings (1,302 items x 10 models = 13,020
judgments) exported, answered by an emulated `vllm run-batch`, and imported.

    python bench/batch_files.py [--data DIR] [--limit N] [--work DIR]

Each phase runs in a process of its own, so its peak memory (max RSS) is its own: export (the job runs on the
file client until every call is deferred, and the file is written), answer (tests/fake_run_batch.py writes a
schema-valid reply per line: the engine's part, timed only to show it is not ours), import (the output checked
against the export, stored, and the job run on it to complete judgments). Prints each phase's wall time and
peak memory, the calls and the sizes of the files and of the workspace. Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = "Qwen/Qwen3-8B"


def _job(data: Path, work: Path, limit: int | None, files: Any) -> Any:
    from howtobench.config import EndpointConfig
    from howtobench.steps.batch_files import FILE_BASE_URL
    from howtobench.steps.judge import JudgeJob
    from howtobench.steps.settings import Execution, Selection

    execution = Execution(workspace=work / "ws", progress=False, files=files)
    return JudgeJob(Selection(data_dir=data, limit=limit), execution, work / "tow.jsonl",
                    endpoint=EndpointConfig(model=MODEL, base_urls=(FILE_BASE_URL,)))


def export(data: Path, work: Path, limit: int | None) -> dict[str, Any]:
    from howtobench.steps.batch_files import BatchFiles, RoundExported
    from howtobench.steps.judge import judge_job

    try:
        asyncio.run(judge_job(_job(data, work, limit, BatchFiles(export=work / "calls.jsonl"))))
    except RoundExported as exc:
        return {"said": str(exc).splitlines()[0]}
    raise SystemExit("the export exported nothing")


def answer(work: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_run_batch import run_batch
    from fake_server import Reply, schema_instance
    from judge_replies import schema_of, weights_for

    def reply(body: dict[str, Any]) -> Reply:
        name, schema = schema_of(body)
        return Reply.json(weights_for(schema) if name == "weights" else schema_instance(schema))

    return {"lines": run_batch(work / "calls.jsonl", work / "answers.jsonl", MODEL, reply)}


def import_(data: Path, work: Path, limit: int | None) -> dict[str, Any]:
    from howtobench.steps.batch_files import BatchFiles
    from howtobench.steps.judge import judge_job

    judged = asyncio.run(judge_job(_job(data, work, limit, BatchFiles(imports=(work / "answers.jsonl",)))))
    return {"judgments": len(judged), "ok": sum(j.status == "ok" for j in judged)}


def run_phase(phase: str, data: Path, work: Path, limit: int | None) -> dict[str, Any]:
    started = time.perf_counter()
    result = {"export": lambda: export(data, work, limit), "answer": lambda: answer(work),
              "import": lambda: import_(data, work, limit)}[phase]()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {**result, "seconds": time.perf_counter() - started, "peak_mb": peak_mb}


def _size(path: Path) -> str:
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
    return f"{size / 1e6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="items (default: all 1,302)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the files (default: a temporary one)")
    parser.add_argument("--phase", choices=("export", "answer", "import"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    from howtobench.config import resolve_data_dir

    data = resolve_data_dir(args.data)
    if args.phase:  # a child: one phase, its figures as JSON on stdout
        print(json.dumps(run_phase(args.phase, data, args.work, args.limit)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        figures = {}
        for phase in ("export", "answer", "import"):
            command = [sys.executable, __file__, "--phase", phase, "--data", str(data), "--work", str(work)]
            out = subprocess.run(command + (["--limit", str(args.limit)] if args.limit else []), check=True,
                                 capture_output=True, text=True).stdout
            figures[phase] = json.loads(out.strip().splitlines()[-1])
        print(f"export: {figures['export']['said']}")
        print(f"import: {figures['import']['judgments']:,} judgments ({figures['import']['ok']:,} ok)")
        for phase in ("export", "answer", "import"):
            f = figures[phase]
            note = "  (the emulated engine, not howtobench)" if phase == "answer" else ""
            print(f"{phase:>7}: {f['seconds']:8.1f} s   peak memory {f['peak_mb']:7.0f} MB{note}")
        print(f"files: calls {_size(work / 'calls.jsonl')}, answers {_size(work / 'answers.jsonl')}, "
              f"judgments {_size(work / 'tow.jsonl')}, workspace {_size(work / 'ws')} "
              f"(batch_files.sqlite {_size(work / 'ws' / 'batch_files.sqlite')})")


if __name__ == "__main__":
    main()
