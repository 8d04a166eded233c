"""Exported batch files: a job's pending model calls as OpenAI Batch input JSONL for an engine of the user's
(`vllm run-batch`, Ray Data, OpenAI's batch API), and that engine's output JSONL folded back into the job.

    howtobench judge ... --batch-export calls.jsonl          # round 1: nothing sent, the calls written
    vllm run-batch -i calls.jsonl -o answers.jsonl --model M
    howtobench judge ... --batch-import answers.jsonl         # answers in; the job goes on; round 2 exported

How: the job runs as usual on a client whose transport is `FileTransport`. A call whose request body (its
`custom_id` is the body's sha256) has an imported answer gets that answer as its HTTP response, so the client
does what it does with a live reply — cache, call log, usage at the model's batch rate, schema checks and
re-asks. A call without one is noted and raises `CallsDeferred`; the runners let every other writing end first
(`StopAfterSiblings`), so when the job stops every call it can ask without new answers has been asked, and those
calls — and only those — are the next round's file. Re-asks of invalid replies and calls that depend on answers
(a judgment's leaves wait for nothing, but a re-ask waits for the reply it corrects) go out in later rounds.

State lives in `<workspace>/batch_files.sqlite` (`steps/batch_store.py`), per job: its output's run id (e.g.
`judge:<out>`) *and* the digest of what it asks — settings, selection, the data's content (`steps/job_identity.py`)
— so an import run with another selection than its export is refused, naming the difference and the matching
command, before anything is stored. Per job: the custom_ids each round exported with their model, every answer
imported. An import is checked in full before anything is stored (`steps/batch_outputs.py`): a custom_id this job
never exported (or another job did), one answered twice, a reply from another model, or a file of another job is
an error naming file and line. A line that is not an answer (not run, refused, malformed) is counted, reported and
never stored: its call goes into the next round, and a corrected output imported later answers it. Importing a
file twice stores nothing new: each answer is stored once and a call is accounted once, when it completes —
nothing is paid twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from howtobench.config import EndpointConfig
from howtobench.errors import CallsDeferred, ConfigError, DataError, HowtobenchError, OutputError
from howtobench.llm.accounting import ModelPrice
from howtobench.llm.batch import CostOf, body_hash, upper_bound_cost
from howtobench.llm.client import CacheMode, open_client
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.transport import HttpResponse, TransportError
from howtobench.llm.types import LLMClient
from howtobench.steps.batch_outputs import import_outputs
from howtobench.steps.batch_store import DB_NAME, FileStore, Identified
from howtobench.steps.job_identity import JobIdentity

__all__ = ["DB_NAME", "BatchFiles", "FileStore", "FileTransport", "RoundExported", "file_client", "import_for"]

CHAT_PATH = "/v1/chat/completions"  # the url of every exported line (what vllm run-batch and OpenAI accept)
FILE_BASE_URL = "http://batch-file.invalid/v1"  # the endpoint URL of a model named for batch files: never contacted
FILE_SLOTS = 50_000  # calls at once on a file client: each is answered or deferred at once, none waits on a server


@dataclass(frozen=True)
class BatchFiles:
    """`--batch-export FILE` (where this round's calls go; default after an import: the last round's file with
    `.roundN` added) and `--batch-import OUT...` (engine outputs to fold in first)."""

    export: Path | None = None
    imports: tuple[Path, ...] = ()
    identity: JobIdentity | None = None  # what the job asks (set by the job: steps/job_identity.py)

    def of(self, identity: JobIdentity) -> BatchFiles:
        """These files for a job that asks `identity`."""
        return replace(self, identity=identity)


class RoundExported(HowtobenchError):
    """The job stopped because its next calls are in a batch file now (not an error: exit status 0)."""

    exit_status = 0

    def __init__(self, text: str) -> None:
        super().__init__(text)


# ------------------------------------------------------------------ answering and exporting


class FileTransport:
    """A `Transport` answering each chat completion from the job's imported answers; a body without one is
    appended to the spool file (the next batch file, once complete) and raises `CallsDeferred`. Bodies are not
    kept in memory: a round of a million calls is written as it is found. Nothing goes to the network."""

    def __init__(self, store: FileStore, job: str, spool: Path, cost_of: CostOf | None) -> None:
        self._store, self._job, self.spool, self._cost_of = store, job, spool, cost_of
        self.pending: list[str] = []  # custom_ids deferred, in the order found
        self._seen: set[str] = set()
        self.cost: float | None = 0.0 if cost_of is not None else None
        self._handle: IO[str] | None = None

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        key = body_hash(body)
        found = self._store.answer(self._job, key)
        if found is not None:
            return HttpResponse(found[0], {}, found[1])
        if key not in self._seen:
            self._defer(key, body)
        raise CallsDeferred(f"call {key[:12]} has no imported answer yet: it goes into the batch file")

    def _defer(self, key: str, body: bytes) -> None:
        try:
            if self._handle is None:
                self.spool.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.spool.open("w", encoding="utf-8")
            line = {"custom_id": key, "method": "POST", "url": CHAT_PATH, "body": json.loads(body)}
            self._handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise OutputError(f"cannot write the batch file {self.spool}: {exc}") from exc
        self._seen.add(key)
        self.pending.append(key)
        if self._cost_of is not None and self.cost is not None:
            self.cost += self._cost_of(body)

    def finish(self, path: Path) -> None:
        """The spool, complete, becomes the batch file `path` (flushed to disk first)."""
        if self._handle is None:
            return
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self.spool.replace(path)
        except OSError as exc:
            raise OutputError(f"cannot write the batch file {path}: {exc}") from exc
        finally:
            self._handle = None

    def discard(self) -> None:
        """No round to write (the job ended another way): the spool goes."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        self.spool.unlink(missing_ok=True)

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        raise TransportError("url", "batch files hold chat completions only")

    async def close(self) -> None:
        return None


def next_file(files: BatchFiles, last: tuple[int, str, set[str]] | None) -> Path:
    """Where this round's calls go: --batch-export, else the last round's file named for the next round."""
    if files.export is not None:
        return files.export
    if last is None:
        raise DataError("--batch-import without an earlier --batch-export of this job")
    previous = Path(last[1])
    stem = previous.stem.rsplit(".round", 1)[0]
    return previous.with_name(f"{stem}.round{last[0] + 1}{previous.suffix}")


def export_round(store: FileStore, identified: Identified, path: Path, transport: FileTransport,
                 model: str) -> RoundExported:
    """The spooled calls become this round's batch input file (the job's identity recorded with them); the
    exception to raise tells the user what next."""
    job = identified.key
    last = store.last_round(job)
    again = last is not None and last[2] == set(transport.pending) and Path(last[1]) == path
    number = last[0] if again and last is not None else (last[0] + 1 if last else 1)
    transport.finish(path)
    store.add_round(job, number, path, dict.fromkeys(transport.pending, model), identified)
    return RoundExported(round_text(path, number, len(transport.pending), model, transport.cost))


def price_of_calls(price: ModelPrice) -> CostOf | None:
    """The upper-bound cost of a call at the model's batch rate (None: the model has no price)."""
    billed = price.billed(batch_rates=True)
    return None if billed is None else upper_bound_cost(billed)


def estimated_cost(cost: float | None, model: str) -> str:
    if cost is None:
        return f"not known: {model} has no price in the table (add one with --prices FILE)"
    return (f"at most ${cost:,.2f} at {model}'s batch rate (prompt tokens from characters, each completion at its "
            "max_tokens); $0 on your own GPUs")


def round_text(path: Path, number: int, calls: int, model: str, cost: float | None) -> str:
    """What a round wrote and the commands that answer it."""
    out = path.with_name(f"{path.stem}.out{path.suffix}")
    return "\n".join([
        f"round {number}: {calls:,} calls for model {model} written to {path} (nothing was sent)",
        f"estimated cost: {estimated_cost(cost, model)}",
        "run them with one of:",
        f"  vllm run-batch -i {path} -o {out} --model {model}",
        f"  Ray Data + vLLM on a cluster: `python ray_data_judge.py {path} {out} --model {model}`, the script is "
        "examples/ray_data_judge.py of the howtobench source repository (not in the pip package; docs/cluster.md)",
        f"  OpenAI: curl https://api.openai.com/v1/files -H \"Authorization: Bearer $OPENAI_API_KEY\" "
        f"-F purpose=batch -F file=@{path}",
        "          then POST /v1/batches {\"input_file_id\": ..., \"endpoint\": \"/v1/chat/completions\", "
        "\"completion_window\": \"24h\"} and save its output file's content as " + str(out),
        f"then run the same command with --batch-import {out} in place of --batch-export (the next round, if one "
        "is needed, is written next to this file)",
    ])


@asynccontextmanager
async def file_client(endpoint: EndpointConfig | None, workspace: Path, files: BatchFiles, *, cache_mode: CacheMode,
                      run_id: str, purpose: str, prices: Path | None, report: Callable[[str], None],
                      imported: bool = False) -> AsyncIterator[LLMClient]:
    """A cached client answered from the job's imported batch outputs (imported here first, unless the caller
    did: `imported`); when the job stops on calls without an answer, they become this round's file and
    `RoundExported` is raised."""
    if endpoint is None:
        raise ConfigError(f"batch files need the {purpose} model's name (--judge-model / --model): it is the model "
                          "of every line, the one the engine must serve")
    store, job = FileStore(workspace), Identified(run_id, files.identity)
    try:
        store.adopt_unnamed(job)
        if files.imports and not imported:
            import_outputs(store, job, files.imports, report)
        path = next_file(files, store.last_round(job.key))
        price = ModelPrice.look_up(endpoint.model, prices)  # once: the round's cost bound and the client's accounts
        transport = FileTransport(store, job.key, path.with_name(f".{path.name}.partial"), price_of_calls(price))
        wide = endpoint.model_copy(update={"concurrency": FILE_SLOTS, "rpm": None, "base_urls": (FILE_BASE_URL,)})
        async with open_client(wide, workspace=workspace, cache_mode=cache_mode, transport=transport,
                               retry=RetryPolicy(base_s=0.0, max_s=0.0), batch_rates=True, price=price,
                               run_id=run_id) as client:
            try:
                yield client
            except CallsDeferred:
                raise export_round(store, job, path, transport, endpoint.model) from None
            finally:
                transport.discard()  # a no-op after a round was written
        report("every call of this step has its answer: no batch file to write")
    finally:
        store.close()


def import_for(workspace: Path, files: BatchFiles, run_id: str, report: Callable[[str], None]) -> None:
    """Import `files.imports` once for a job of several steps (`run`), before its first step."""
    if not files.imports:
        return
    store, job = FileStore(workspace), Identified(run_id, files.identity)
    try:
        store.adopt_unnamed(job)
        import_outputs(store, job, files.imports, report)
    finally:
        store.close()
