"""Provider batch APIs (OpenAI-compatible `/files` + `/batches`) behind the client's transport seam.

`BatchTransport` is a `Transport`: the client posts each chat completion to it as it would to a server, and
the transport answers with the HTTP status and body the batch produced for that request. So everything the
client does with a reply — cache, call log, schema validation and re-asks, error classification, usage —
is the same code as for a live call, and the normal pipeline (`run_judge`, `generate_writings`) runs
unchanged: its calls simply wait for their batch.

How requests become batches: posted bodies queue up; once no new one has arrived for `quiet_s` (the
pipeline has sent all it can before it needs answers) the queue is written as a batch JSONL file (one
line per distinct body, `custom_id` = sha256 of the body), uploaded to `/files` and submitted to
`/batches` — in several batches past `max_requests` or `max_bytes`. Once the file is uploaded, and before
the batch is created, a pending record (`pending-<file id>.json`: the file id and the body hashes) is stored;
once `/batches` answers, it is replaced by `<workspace>/batches/<batch id>.json` (stored before the first
poll). So a process killed at any moment leaves a record: a body posted by the next run whose hash an
unfinished or unconsumed stored batch holds waits for that batch instead of going into a new one, and a
pending record is first looked up among the provider's batches (`GET /batches`, by input file) — a batch
created while its reply was lost is resumed, never created (and paid for) a second time.

Every batch API call retries a transient failure (5xx, 429, a dropped connection) with jittered backoff,
`api_retries` times: one bad status poll never stops a 24-hour batch; only a persistent failure stops the
run, and the stored batch is resumed by the next. A POST /batches that failed transiently is retried only
after the provider's list shows no batch for its file. Calls that depend on answers (re-asks of invalid replies, the
negotiator's re-asks) queue up once those answers are in and go out as a follow-up batch.

Per-request outcomes come back as HTTP responses: the output line's status and body (so a 400 "context
too long" is a writing-level failure and a 401 stops the run, as live); a request the batch never ran (an
expired batch, an error line without a response) comes back as a 503, which the client retries — in the
next batch — until its retry budget runs out. A batch that fails as a whole (its file was rejected) or is
cancelled stops the run (`PermanentError` / `TransientError`). Status lines go to `report`.

`--max-cost` (a `budget.spending_limit`): a batch is paid for when it is submitted but accounted only when it
answers, so before each submission the queued requests are priced at their upper bound (`cost_of`: prompt
tokens from characters, the completion at the body's max_tokens, the batch rate) and only those that fit under
the limit minus what is accounted and what the batches in flight may still cost are submitted, in queue order.
The others are held until nothing is in flight and the pipeline has gone quiet (every answer paid for has been
handed out, cached and written); then they are looked at again against what was really accounted. When not one
of them fits, each held call fails with `BudgetExceeded`: the run stops cleanly, and a re-run with a higher
limit resumes from the cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from howtobench.config import proxy_for
from howtobench.errors import (
    INTERRUPTED,
    BudgetExceeded,
    ConfigError,
    Interrupted,
    OutputError,
    PermanentError,
    ReplyTooLarge,
    TransientError,
)
from howtobench.http import CONNECT_TIMEOUT_S, HttpResponse, TransportError, new_session
from howtobench.interrupt import check_drain, on_drain
from howtobench.llm.accounting import Price
from howtobench.llm.budget import Budget, active_budget
from howtobench.llm.pricing import body_bound_usd
from howtobench.llm.retry import RetryPolicy
from howtobench.llm.transport import MAX_REPLY_BYTES, read_capped
from howtobench.redact import redact_text, redact_url

DONE_STATES = frozenset({"completed", "expired", "failed", "cancelled"})
NOT_RUN = 503  # what a request the batch never ran answers: the client retries it in a later batch
PENDING = "pending-"  # the id prefix of a submission whose POST /batches has not answered yet
LIST_SLACK_S = 3600.0  # the provider's clock may differ from ours: batches this much older are still looked at
T = TypeVar("T")


@dataclass(frozen=True)
class BatchSettings:
    """How batches are formed and watched (`poll_s` between status checks, `quiet_s` of no new request
    before the queue is sent; a batch holds at most `max_requests` lines and `max_bytes` of JSONL;
    `api_retries` retries of a batch API call that failed transiently, backing off from min(1 s, poll_s))."""

    poll_s: float = 30.0
    quiet_s: float = 1.0
    max_requests: int = 50_000
    max_bytes: int = 150 * 1024 * 1024
    completion_window: str = "24h"
    api_retries: int = 10


@dataclass
class _Waiting:
    """One distinct request body and the calls waiting for its answer."""

    path: str
    body: bytes
    futures: list[asyncio.Future[HttpResponse]] = field(default_factory=list)


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


CostOf = Callable[[bytes], float]


def upper_bound_cost(price: Price) -> CostOf:
    """Dollars a request body may cost at most: prompt tokens from its characters, the completion at its
    max_tokens (or max_completion_tokens), no cache hits; `price` is the rate the batch is billed at."""

    def cost(body: bytes) -> float:
        return body_bound_usd(price, json.loads(body))

    return cost


def api_root(url: str) -> tuple[str, str]:
    """(base URL, path) of a chat URL: `https://h/v1/chat/completions` -> (`https://h/v1`, `/v1/chat/completions`)."""
    parts = urlsplit(url)
    base_path = parts.path.rsplit("/chat/completions", 1)[0]
    return urlunsplit(parts._replace(path=base_path, query="")), parts.path


class BatchStore:
    """The batches submitted from this workspace: `<workspace>/batches/<batch id>.json`, one file each."""

    def __init__(self, workspace: Path) -> None:
        self.folder = workspace / "batches"

    def save(self, record: dict[str, Any]) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{record['id']}.json"
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(record), encoding="utf-8")
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
            tmp.replace(path)
        except OSError as exc:
            raise OutputError(f"cannot record batch {record['id']} in {self.folder}: {exc}") from exc

    def remove(self, record_id: str) -> None:
        """Forget a record (a pending submission once its batch is stored under its own id)."""
        with contextlib.suppress(FileNotFoundError):
            (self.folder / f"{record_id}.json").unlink()

    def load(self, base: str) -> list[dict[str, Any]]:
        """Stored batches of this base URL whose answers were not yet handed out, oldest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in sorted(self.folder.glob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                record = json.loads(path.read_text(encoding="utf-8"))
                if record.get("base") == redact_url(base) and not record.get("consumed"):
                    found.append(record)
        return sorted(found, key=lambda r: r.get("created", 0))


BATCH_CALL_TIMEOUT = aiohttp.ClientTimeout(total=600, sock_connect=CONNECT_TIMEOUT_S)  # an upload may be large
# A batch's output file holds every answer of one submission (OpenAI takes input files up to 200 MB, and the
# answers of a judge are smaller than its prompts): past this the endpoint misbehaves, so reading stops.
MAX_BATCH_FILE_BYTES = 1024 * 1024 * 1024


class BatchAPI:
    """The four calls of an OpenAI-compatible batch API, over a session of the toolkit's one factory
    (`howtobench.http.new_session`: its TLS, User-Agent and connect-timeout rules; the proxy of the base URL)."""

    def __init__(self, base: str, headers: Mapping[str, str]) -> None:
        self.base = base
        self._headers = dict(headers)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = new_session()
        return self._session

    async def _call(self, method: str, path: str, *, limit: int = MAX_REPLY_BYTES, **kw: Any) -> bytes:
        """The body of one batch API call, read up to `limit` bytes: a bigger one stops the run (ReplyTooLarge),
        as a model reply over the transport's limit does."""
        url = self.base + path
        try:
            async with self._client().request(method, url, headers=self._headers, proxy=proxy_for(url),
                                              timeout=BATCH_CALL_TIMEOUT, **kw) as resp:
                body = await read_capped(resp, limit, url)
        except TransportError as exc:
            raise ReplyTooLarge(redact_text(f"batch API {method} {url}: {exc}")) from exc
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransientError(redact_text(f"batch API {method} {url}: {type(exc).__name__}: {exc}")) from exc
        said = redact_text(f"batch API {method} {url} answered HTTP {resp.status}: {body[:300]!r}")
        if resp.status >= 500 or resp.status == 429:
            raise TransientError(said)
        if resp.status >= 400:
            raise PermanentError(f"{said} (does this endpoint offer /files and /batches, and is the key valid?)")
        return body

    async def upload(self, jsonl: bytes, name: str) -> str:
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", jsonl, filename=name, content_type="application/jsonl")
        return str(json.loads(await self._call("POST", "/files", data=form))["id"])

    async def create(self, file_id: str, endpoint: str, window: str) -> dict[str, Any]:
        body = {"input_file_id": file_id, "endpoint": endpoint, "completion_window": window}
        return dict(json.loads(await self._call("POST", "/batches", json=body)))

    async def status(self, batch_id: str) -> dict[str, Any]:
        return dict(json.loads(await self._call("GET", f"/batches/{batch_id}")))

    async def find(self, file_id: str, since: float) -> dict[str, Any] | None:
        """The batch created from input file `file_id`, looked up in the provider's list (newest first, down to
        batches created before `since`, less the clock slack); None when there is none."""
        after = ""
        while True:
            page = json.loads(await self._call("GET", "/batches?limit=100" + (f"&after={after}" if after else "")))
            batches = [b for b in page.get("data") or [] if isinstance(b, dict)]
            for batch in batches:
                if batch.get("input_file_id") == file_id:
                    return dict(batch)
            oldest = min((float(b.get("created_at") or 0) for b in batches), default=0.0)
            if not batches or not page.get("has_more") or oldest < since - LIST_SLACK_S:
                return None
            after = str(batches[-1]["id"])

    async def content(self, file_id: str) -> bytes:
        return await self._call("GET", f"/files/{file_id}/content", limit=MAX_BATCH_FILE_BYTES)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _response(line: dict[str, Any] | None, batch_id: str) -> HttpResponse:
    """The HTTP response a batch output or error line stands for (a request it never ran: NOT_RUN)."""
    answer = (line or {}).get("response")
    if isinstance(answer, dict) and isinstance(answer.get("status_code"), int):
        return HttpResponse(answer["status_code"], {}, json.dumps(answer.get("body") or {}).encode())
    error = (line or {}).get("error") or {}
    why = f"{error.get('code', 'not run')}: {error.get('message', 'no result')}" if error else "no result line"
    message = f"batch {batch_id} did not run this request ({why})"
    return HttpResponse(NOT_RUN, {}, json.dumps({"error": {"message": message}}).encode())


def _lines(raw: bytes) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for text in raw.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError):
            line = json.loads(text)
            if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                out[line["custom_id"]] = line
    return out


def _counts(batch: dict[str, Any]) -> str:
    c = batch.get("request_counts") or {}
    return f"{c.get('completed', 0)}/{c.get('total', 0)} done, {c.get('failed', 0)} failed"


class BatchTransport:
    """A `Transport` that answers chat completions through the provider's batch API (see the module docstring)."""

    def __init__(self, workspace: Path, settings: BatchSettings | None = None,
                 report: Callable[[str], None] | None = None, cost_of: CostOf | None = None) -> None:
        self.settings = settings or BatchSettings()
        self._cost_of = cost_of  # None: no price known (a --max-cost is then refused before the first call)
        self._reserved = 0.0  # upper-bound dollars of the submitted requests not answered yet
        self._held: dict[str, _Waiting] = {}  # queued requests the budget left no room for
        self.store = BatchStore(workspace)
        self._report = report or (lambda _text: None)
        self._queue: dict[str, _Waiting] = {}
        self._arrived = 0
        self._wake = asyncio.Event()
        self._headers: dict[str, str] = {}
        self._base = ""
        self._apis: dict[str, BatchAPI] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._flusher: asyncio.Task[None] | None = None
        self.submitted: list[str] = []  # batch ids created by this process
        self._rng = random.Random()
        self._waiting: set[asyncio.Future[HttpResponse]] = set()  # every call not answered yet
        self._forget_drain = on_drain(self._stop_waiting)

    async def post_json(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpResponse:
        base, path = api_root(url)
        if self._base and base != self._base:
            raise TransportError("url", f"batch mode serves one base URL, not {redact_url(base)} and "
                                        f"{redact_url(self._base)}")
        if self._cost_of is None and active_budget() is not None:
            raise ConfigError("--max-cost with --batch needs the model's price (add it with --prices FILE)")
        self._base, self._headers = base, {k: v for k, v in headers.items() if k.lower() == "authorization"}
        key = body_hash(body)
        waiting = self._queue.setdefault(key, _Waiting(path, body))
        check_drain()  # after Ctrl-C nothing new goes into a batch
        future: asyncio.Future[HttpResponse] = asyncio.get_running_loop().create_future()
        waiting.futures.append(future)
        self._waiting.add(future)
        future.add_done_callback(self._waiting.discard)
        self._arrived += 1
        self._wake.set()
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush_loop())
        return await future

    async def get(self, url: str, timeout_s: float) -> HttpResponse:
        raise TransportError("url", "batch mode sends chat completions only")

    def _stop_waiting(self) -> None:
        """Ctrl-C: the calls waiting for a batch stop waiting (`howtobench.interrupt`); the batches stay recorded in
        the workspace, and the same command resumes them — nothing submitted is submitted (or paid) again."""
        stop = Interrupted(f"{INTERRUPTED} (the batches submitted are recorded in {self.store.folder}: they are "
                           "resumed, not submitted again)")
        for future in list(self._waiting):
            if not future.done():
                future.set_exception(stop)

    async def close(self) -> None:
        self._forget_drain()
        for task in [*self._tasks, *([self._flusher] if self._flusher else [])]:
            task.cancel()
        for api in self._apis.values():
            await api.close()

    # ---------------------------------------------------------------- forming batches

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            while True:  # wait for a quiet moment: the pipeline has queued all it can
                seen = self._arrived
                await asyncio.sleep(self.settings.quiet_s)
                if self._arrived == seen:
                    break
            self._wake.clear()
            queued, self._queue = self._queue, {}
            if self._held and not self._tasks:  # nothing in flight: the held requests get another look
                queued, self._held = {**self._held, **queued}, {}
            if queued:
                task = asyncio.ensure_future(self._settle(queued))
                self._tasks.add(task)
                task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[None]) -> None:
        """A batch job ended: look again once the pipeline has handed out its answers (held calls may be refused)."""
        self._tasks.discard(task)
        if self._held:
            self._wake.set()

    def _affordable(self, queued: dict[str, _Waiting]) -> tuple[dict[str, _Waiting], float]:
        """The queued requests that fit under --max-cost (in order; the rest are held) and their estimate."""
        budget = active_budget()
        if budget is None or self._cost_of is None:  # a limit without a price is refused in post_json
            return queued, 0.0
        room = budget.limit - budget.spent - self._reserved
        fits: dict[str, _Waiting] = {}
        estimate = 0.0
        for key, waiting in queued.items():
            cost = self._cost_of(waiting.body)
            if self._held or cost > room - estimate:
                self._held[key] = waiting
            else:
                fits[key] = waiting
                estimate += cost
        if self._held and not fits and not self._reserved:  # nothing in flight, and not one more fits
            self._refuse_held(budget, self._cost_of)
        return fits, estimate

    def _refuse_held(self, budget: Budget, cost_of: CostOf) -> None:
        """Fail every held call: nothing is in flight any more and the budget leaves no room for them."""
        held, self._held = self._held, {}
        more = sum(cost_of(w.body) for w in held.values())
        error = BudgetExceeded(
            f"--max-cost ${budget.limit:,.2f}: ${budget.spent:,.4f} accounted, and the {len(held)} requests not "
            f"submitted may cost up to ${more:,.4f} more at the batch rate (each at its max_tokens); stopped before "
            "submitting them. Finished work is saved: run the same command again (with a higher --max-cost) to "
            "resume")
        self._report(f"--max-cost: {len(held)} requests not submitted")
        for waiting in held.values():
            for future in waiting.futures:
                if not future.done():
                    future.set_exception(error)

    def _api(self) -> BatchAPI:
        if self._base not in self._apis:
            self._apis[self._base] = BatchAPI(self._base, self._headers)
        return self._apis[self._base]

    async def _settle(self, queued: dict[str, _Waiting]) -> None:
        """Answer the queued calls: from stored batches a killed run submitted, else from new batches. A batch
        that cannot answer (failed, cancelled, API error) fails every call still waiting with the error."""
        groups: list[dict[str, _Waiting]] = []
        reserved = 0.0
        try:
            jobs = []
            for record in self.store.load(self._base):
                mine = {h: queued.pop(h) for h in record["hashes"] if h in queued}
                if mine:
                    groups.append(mine)
                    jobs.append(self._resume(record, mine))
            fits, estimate = self._affordable(queued)
            self._reserved += estimate
            reserved = estimate
            for chunk in self._chunks(fits):
                groups.append(chunk)
                jobs.append(self._submit(chunk))
            await asyncio.gather(*jobs)
        except Exception as exc:
            for group in groups:
                for waiting in group.values():
                    for future in waiting.futures:
                        if not future.done():
                            future.set_exception(exc)
        finally:
            self._reserved -= reserved  # answered (and accounted by the client) or failed

    def _chunks(self, queued: dict[str, _Waiting]) -> list[dict[str, _Waiting]]:
        chunks: list[dict[str, _Waiting]] = [{}]
        size = 0
        for key, waiting in queued.items():
            if len(chunks[-1]) >= self.settings.max_requests or (
                    chunks[-1] and size + len(waiting.body) > self.settings.max_bytes):
                chunks.append({})
                size = 0
            chunks[-1][key] = waiting
            size += len(waiting.body) + 200
        return [c for c in chunks if c]

    async def _submit(self, chunk: dict[str, _Waiting]) -> None:
        lines = [json.dumps({"custom_id": key, "method": "POST", "url": w.path,
                             "body": json.loads(w.body)}, ensure_ascii=False) for key, w in chunk.items()]
        api = self._api()
        jsonl = ("\n".join(lines) + "\n").encode("utf-8")
        file_id = await self._patiently(lambda: api.upload(jsonl, f"howtobench-{int(time.time())}.jsonl"))
        pending: dict[str, Any] = {"id": PENDING + file_id, "base": redact_url(self._base), "input_file_id": file_id,
                                   "endpoint": next(iter(chunk.values())).path, "created": time.time(),
                                   "hashes": list(chunk)}
        self.store.save(pending)  # before POST /batches: a kill while it is under way leaves this record
        record = await self._create(pending, look_first=False)
        self.submitted.append(record["id"])
        self._report(f"batch {record['id']}: submitted {len(chunk)} requests ({record.get('status', '?')})")
        await self._watch(record, chunk)

    async def _resume(self, record: dict[str, Any], mine: dict[str, _Waiting]) -> None:
        """Answer `mine` from a stored batch; a pending submission first finds (or else creates) its batch."""
        if str(record["id"]).startswith(PENDING):
            record = await self._create(record, look_first=True)
        self._report(f"batch {record['id']}: resuming ({len(mine)} of its requests still wanted)")
        await self._watch(record, mine)

    async def _create(self, pending: dict[str, Any], *, look_first: bool) -> dict[str, Any]:
        """The batch of a pending submission, stored under its own id: the one the provider already made from
        its file (`look_first`, or after a transient failure of POST /batches), else a new one."""
        api, file_id = self._api(), str(pending["input_file_id"])
        for attempt in range(1, self.settings.api_retries + 2):
            find = functools.partial(api.find, file_id, float(pending["created"]))
            batch = await self._patiently(find) if look_first else None
            if batch is None:
                try:
                    batch = await api.create(file_id, pending["endpoint"], self.settings.completion_window)
                except TransientError:
                    if attempt > self.settings.api_retries:
                        raise
                    await asyncio.sleep(self._backoff(attempt))
                    look_first = True  # it may have been made although its reply was lost
                    continue
            record = {**{k: v for k, v in pending.items() if k != "endpoint"}, "id": str(batch["id"]),
                      "status": batch.get("status", "?")}
            self.store.save(record)
            self.store.remove(str(pending["id"]))
            return record
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _backoff(self, attempt: int) -> float:
        policy = RetryPolicy(base_s=min(1.0, self.settings.poll_s))
        return policy.delay(attempt, None, self._rng)

    async def _patiently(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, retried with backoff while it fails transiently (5xx, 429, dropped), `api_retries` times."""
        for attempt in range(1, self.settings.api_retries + 2):
            try:
                return await call()
            except TransientError as exc:
                if attempt > self.settings.api_retries:
                    raise TransientError(f"{exc} (gave up after {attempt} attempts; the batch is stored in "
                                         f"{self.store.folder}: run the same command again to resume it)") from None
                await asyncio.sleep(self._backoff(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    # ---------------------------------------------------------------- watching and answering

    async def _watch(self, record: dict[str, Any], chunk: dict[str, _Waiting]) -> None:
        """Poll until the batch is done, then answer every waiting call from its output and error files; the
        stored record is then marked consumed (a later run never waits for it again)."""
        api, last, batch_id = self._api(), "", str(record["id"])
        while True:
            batch = await self._patiently(functools.partial(api.status, batch_id))
            state = str(batch.get("status", "?"))
            line = f"batch {batch_id}: {state}, {_counts(batch)}"
            if line != last:
                self._report(line)
                last = line
            if state in DONE_STATES:
                break
            await asyncio.sleep(self.settings.poll_s)
        if state in ("failed", "cancelled"):
            self.store.save({**record, "consumed": True, "status": state})
        if state == "failed":
            errors = (batch.get("errors") or {}).get("data") or []
            why = "; ".join(str(e.get("message", e)) for e in errors[:3]) or "no reason given"
            raise PermanentError(f"batch {batch_id} failed as a whole: {why}")
        if state == "cancelled":
            raise TransientError(f"batch {batch_id} was cancelled; run again to submit its requests anew")
        results: dict[str, dict[str, Any]] = {}
        for file_key in ("output_file_id", "error_file_id"):
            if batch.get(file_key):
                file_id = str(batch[file_key])
                results.update(_lines(await self._patiently(functools.partial(api.content, file_id))))
        self.store.save({**record, "consumed": True, "status": state})
        for key, waiting in chunk.items():
            response = _response(results.get(key), batch_id)
            for future in waiting.futures:
                if not future.done():
                    future.set_result(response)
