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

State lives in `<workspace>/batch_files.sqlite`, per job (its call-log run id, e.g. `judge:<out>`): the custom_ids
each round exported with their model, and every answer imported. An import is checked in full before anything is
stored: a custom_id this job never exported (or another job did), one answered twice, a reply from another model,
or a file of another job is an error naming file and line; an error line is reported with its file and line and
kept as that call's HTTP answer (a 4xx stops the run as live, naming the line) or, when the engine never ran it
(no response, 429, 5xx), left out so the call is exported again. Importing a file twice stores nothing new: each
answer is stored once and a call is accounted once, when it completes — nothing is paid twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from howtobench.config import EndpointConfig
from howtobench.errors import CallsDeferred, ConfigError, DataError, HowtobenchError, OutputError, RowError
from howtobench.llm.accounting import load_prices, price_for
from howtobench.llm.batch import CostOf, body_hash, upper_bound_cost
from howtobench.llm.client import CacheMode, open_client
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.transport import HttpResponse, TransportError
from howtobench.llm.types import LLMClient

DB_NAME = "batch_files.sqlite"
CHAT_PATH = "/v1/chat/completions"  # the url of every exported line (what vllm run-batch and OpenAI accept)
FILE_BASE_URL = "http://batch-file.invalid/v1"  # the endpoint URL of a model named for batch files: never contacted
FILE_SLOTS = 50_000  # calls at once on a file client: each is answered or deferred at once, none waits on a server
NOT_RUN = frozenset({429, 500, 502, 503, 504})  # answers of a request the engine did not really run: asked again


@dataclass(frozen=True)
class BatchFiles:
    """`--batch-export FILE` (where this round's calls go; default after an import: the last round's file with
    `.roundN` added) and `--batch-import OUT...` (engine outputs to fold in first)."""

    export: Path | None = None
    imports: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One imported output line: the HTTP status and body the call gets, and where it came from (file:line)."""

    custom_id: str
    status: int
    body: bytes
    source: str


class RoundExported(HowtobenchError):
    """The job stopped because its next calls are in a batch file now (not an error: exit status 0)."""

    exit_status = 0

    def __init__(self, text: str) -> None:
        super().__init__(text)


class FileStore:
    """The exported custom_ids and imported answers of every job of a workspace (SQLite, committed per round)."""

    def __init__(self, workspace: Path) -> None:
        try:
            workspace.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(workspace / DB_NAME, timeout=30)
            self._db.executescript(
                "CREATE TABLE IF NOT EXISTS exported (job TEXT, custom_id TEXT, model TEXT, round INTEGER, file TEXT,"
                " PRIMARY KEY (job, custom_id));"
                "CREATE TABLE IF NOT EXISTS answered (job TEXT, custom_id TEXT, status INTEGER, body BLOB,"
                " source TEXT, PRIMARY KEY (job, custom_id));")
        except (OSError, sqlite3.Error) as exc:
            raise OutputError(f"cannot open {workspace / DB_NAME}: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def exported(self, job: str) -> dict[str, str]:
        """custom_id -> model of every call `job` exported (all rounds)."""
        rows = self._db.execute("SELECT custom_id, model FROM exported WHERE job = ?", (job,))
        return dict(rows.fetchall())

    def owner(self, custom_id: str) -> str | None:
        """A job that exported `custom_id`, if any (to name it when another job's file is imported)."""
        row = self._db.execute("SELECT job FROM exported WHERE custom_id = ? LIMIT 1", (custom_id,)).fetchone()
        return None if row is None else str(row[0])

    def last_round(self, job: str) -> tuple[int, str, set[str]] | None:
        """(number, file, custom_ids) of the job's latest exported round."""
        row = self._db.execute("SELECT MAX(round) FROM exported WHERE job = ?", (job,)).fetchone()
        if row is None or row[0] is None:
            return None
        rows = self._db.execute("SELECT custom_id, file FROM exported WHERE job = ? AND round = ?", (job, row[0]))
        found = rows.fetchall()
        return int(row[0]), str(found[0][1]), {r[0] for r in found}

    def answer(self, job: str, custom_id: str) -> tuple[int, bytes] | None:
        row = self._db.execute("SELECT status, body FROM answered WHERE job = ? AND custom_id = ?",
                               (job, custom_id)).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    def add_answers(self, job: str, answers: list[Answer]) -> int:
        """Store answers not stored yet (the first one of a custom_id stays); returns how many were new."""
        with self._db:
            before = self._db.total_changes
            self._db.executemany("INSERT OR IGNORE INTO answered VALUES (?, ?, ?, ?, ?)",
                                 [(job, a.custom_id, a.status, a.body, a.source) for a in answers])
            return self._db.total_changes - before

    def add_round(self, job: str, number: int, file: Path, models: Mapping[str, str]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO exported VALUES (?, ?, ?, ?, ?)",
                                 [(job, key, model, number, str(file)) for key, model in models.items()])


# ------------------------------------------------------------------ importing


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-empty line; a line that is no JSON object is an error naming it."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the batch output: {exc}") from exc
    with handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError as exc:
                raise RowError(path, number, f"not a JSON line of a batch output ({exc})") from None
            if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                raise RowError(path, number, "no custom_id: not a line of an OpenAI batch output file")
            yield number, line


def _same_model(answered: Any, exported: str) -> bool:
    """The reply's model is the one asked: the same name, or a dated snapshot of it (OpenAI answers a request
    for gpt-4o-mini as gpt-4o-mini-2024-07-18)."""
    return isinstance(answered, str) and (answered == exported or answered.startswith(exported + "-"))


def _error_text(line: dict[str, Any], response: dict[str, Any]) -> str:
    """The error a line carries: its `error` (a string, or an object with a message), else its body's error."""
    body = response.get("body")
    error = line.get("error") or (body.get("error") if isinstance(body, dict) else None)
    if isinstance(error, dict):
        inner = error.get("error", error)
        return str(inner.get("message", inner) if isinstance(inner, dict) else inner)
    return str(error) if error else "no response"


def _answer(path: Path, number: int, line: dict[str, Any], model: str,
            report: Callable[[str], None]) -> Answer | None:
    """The answer an output line gives its call; None when the engine did not run it (asked again next round)."""
    key, where = line["custom_id"], f"{path}:{number}"
    given = line.get("response")
    response: dict[str, Any] = given if isinstance(given, dict) else {}
    status = response.get("status_code") if isinstance(response.get("status_code"), int) else None
    body = response.get("body")
    if status == 200 and not line.get("error") and isinstance(body, dict):
        if not _same_model(body.get("model"), model):
            raise RowError(path, number, f"the reply to custom_id {key[:12]} comes from model {body.get('model')!r}, "
                           f"but the call was exported for {model!r}: an output of another model's run")
        choices = body.get("choices")
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)
                and isinstance((choices[0].get("message") or {}).get("content"), str)):
            raise RowError(path, number, f"the reply to custom_id {key[:12]} holds no choices[0].message.content")
        return Answer(key, 200, json.dumps(body, ensure_ascii=False).encode(), where)
    message = _error_text(line, response)
    if status is None or status in NOT_RUN:
        report(f"{where}: the engine did not run custom_id {key[:12]} ({status or 'no response'}: {message}); "
               "it goes into the next round's file")
        return None
    report(f"{where}: the engine answered custom_id {key[:12]} with HTTP {status}: {message}")
    error = {"error": {"message": f"{where}: {message}"}}
    return Answer(key, status, json.dumps(error, ensure_ascii=False).encode(), where)


def read_outputs(store: FileStore, job: str, paths: tuple[Path, ...],
                 report: Callable[[str], None]) -> list[Answer]:
    """Every answer of `paths`, checked against what `job` exported (see the module docstring); raises on the
    first problem, naming file and line, before anything is stored."""
    exported = store.exported(job)
    if not exported:
        raise DataError(f"nothing was exported by this job ({job}): run it with --batch-export FILE first, with "
                        "the same options and output")
    seen: dict[str, str] = {}
    answers: list[Answer] = []
    for path in paths:
        lines = list(_lines(path))
        if lines and not any(line["custom_id"] in exported for _, line in lines):
            other = store.owner(lines[0][1]["custom_id"])
            raise DataError(f"{path} answers another job's calls: none of its {len(lines)} custom_ids was exported "
                            f"by {job}" + (f" (they are {other}'s)" if other else ""))
        for number, line in lines:
            key = line["custom_id"]
            if key not in exported:
                other = store.owner(key)
                raise RowError(path, number, f"custom_id {key[:12]} was not exported by {job}"
                               + (f" (it is {other}'s)" if other else ""))
            if key in seen:
                raise RowError(path, number, f"custom_id {key[:12]} is answered twice (first at {seen[key]})")
            seen[key] = f"{path}:{number}"
            answer = _answer(path, number, line, exported[key], report)
            if answer is not None:
                answers.append(answer)
    return answers


def import_outputs(store: FileStore, job: str, paths: tuple[Path, ...], report: Callable[[str], None]) -> None:
    """Check and store the answers of `paths` for `job`, saying how many were new."""
    answers = read_outputs(store, job, paths, report)
    new = store.add_answers(job, answers)
    names = ", ".join(str(p) for p in paths)
    report(f"imported {new:,} answers from {names}" + (f" ({len(answers) - new:,} were imported before: "
                                                        "nothing changes for them)" if len(answers) > new else ""))


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


def export_round(store: FileStore, job: str, path: Path, transport: FileTransport, model: str) -> RoundExported:
    """The spooled calls become this round's batch input file; the exception to raise tells the user what next."""
    last = store.last_round(job)
    again = last is not None and last[2] == set(transport.pending) and Path(last[1]) == path
    number = last[0] if again and last is not None else (last[0] + 1 if last else 1)
    transport.finish(path)
    store.add_round(job, number, path, dict.fromkeys(transport.pending, model))
    return RoundExported(round_text(path, number, len(transport.pending), model, transport.cost))


def price_of_calls(model: str, prices: Path | None) -> CostOf | None:
    """The upper-bound cost of a call at the model's batch rate (None: the model has no price)."""
    price = price_for(model, load_prices(prices))
    return None if price is None else upper_bound_cost(price.at_batch_rate())


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
        f"  python examples/ray_data_judge.py {path} {out} --model {model}    (Ray Data + vLLM on a cluster)",
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
    store = FileStore(workspace)
    try:
        if files.imports and not imported:
            import_outputs(store, run_id, files.imports, report)
        path = next_file(files, store.last_round(run_id))
        transport = FileTransport(store, run_id, path.with_name(f".{path.name}.partial"),
                                  price_of_calls(endpoint.model, prices))
        wide = endpoint.model_copy(update={"concurrency": FILE_SLOTS, "rpm": None, "base_urls": (FILE_BASE_URL,)})
        async with open_client(wide, workspace=workspace, cache_mode=cache_mode, transport=transport,
                               retry=RetryPolicy(base_s=0.0, max_s=0.0), batch_rates=True, prices=prices,
                               run_id=run_id) as client:
            try:
                yield client
            except CallsDeferred:
                raise export_round(store, run_id, path, transport, endpoint.model) from None
            finally:
                transport.discard()  # a no-op after a round was written
        report("every call of this step has its answer: no batch file to write")
    finally:
        store.close()


def import_for(workspace: Path, files: BatchFiles, run_id: str, report: Callable[[str], None]) -> None:
    """Import `files.imports` once for a job of several steps (`run`), before its first step."""
    if not files.imports:
        return
    store = FileStore(workspace)
    try:
        import_outputs(store, run_id, files.imports, report)
    finally:
        store.close()
