"""A fake OpenAI-compatible batch API on loopback (aiohttp.web in a background thread), for the batch tests.

Routes (under /v1): POST /files (multipart: purpose, file), GET /files/{id}/content, POST /batches,
GET /batches (newest first, `limit` and `after` pages, as OpenAI's), GET /batches/{id}. A batch stays
`in_progress` for `polls` status checks, then finishes: every input line is answered by `handler(body)` — the
same handlers and `Reply` objects as `fake_server.FakeServer`; a 200 goes to the output file, any other status
to the error file with its error body.

Scripting whole batches: `outcomes` is a list consumed one per created batch ("completed" when empty):
    "completed"    every line runs
    "expired:N"    only the first N lines run; the others get a `batch_expired` error line (no response)
    "failed"       the batch fails as a whole (status failed, `errors`), no output
Faults: `create_delay` seconds between creating a batch and answering POST /batches (a client killed then never
learns the id: the provider bills the batch anyway); `status_errors` status checks answered HTTP 500 before the
real status (a transient fault of the provider).
Records: `uploads` (the JSONL bytes of each uploaded file), `created` (batch ids in order), `ran` (every
request body a batch ran), `status_checks`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from fake_server import FakeServer, Reply, _as_reply, _error_body, default_handler

Handler = Callable[[dict[str, Any]], Reply | str | dict[str, Any]]


class FakeBatchServer:
    def __init__(self, handler: Handler = default_handler, *, polls: int = 1) -> None:
        self.handler = handler
        self.polls = polls
        self.outcomes: list[str] = []
        self.files: dict[str, bytes] = {}
        self.uploads: list[bytes] = []
        self.user_agents: list[str | None] = []  # the User-Agent of every upload
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.ran: list[dict[str, Any]] = []
        self.status_checks = 0
        self.create_delay = 0.0
        self.status_errors = 0
        self.listings = 0
        self._checks: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._completions = FakeServer()  # only its completion-body builder is used
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._ready = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> FakeBatchServer:
        threading.Thread(target=self._run, daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError("fake batch server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=512 * 1024 * 1024)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._status)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    # ------------------------------------------------------------------ routes

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        data = upload.file.read() if hasattr(upload, "file") else str(upload).encode()
        assert form["purpose"] == "batch"
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = data
        self.uploads.append(data)
        self.user_agents.append(request.headers.get("User-Agent"))
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "purpose": "batch"})

    async def _content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["id"])
        if data is None:
            return web.json_response(_error_body("no such file", 404), status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("input_file_id") not in self.files:
            return web.json_response(_error_body("no such input file", 400), status=400)
        batch_id = f"batch_{next(self._ids)}"
        lines = self.files[body["input_file_id"]].decode().splitlines()
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "status": "validating",
            "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
            "output_file_id": None, "error_file_id": None, "errors": None, "created_at": int(time.time()),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "_outcome": self.outcomes.pop(0) if self.outcomes else "completed",
        }
        self.created.append(batch_id)
        self._checks[batch_id] = 0
        if self.create_delay:
            await asyncio.sleep(self.create_delay)
        return web.json_response(self._public(batch_id))

    async def _list(self, request: web.Request) -> web.Response:
        self.listings += 1
        newest_first = self.created[::-1]
        after = request.query.get("after")
        start = newest_first.index(after) + 1 if after in newest_first else 0
        limit = int(request.query.get("limit", "20"))
        page = newest_first[start:start + limit]
        return web.json_response({"object": "list", "data": [self._public(b) for b in page],
                                  "first_id": page[0] if page else None, "last_id": page[-1] if page else None,
                                  "has_more": start + limit < len(newest_first)})

    async def _status(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["id"]
        if batch_id not in self.batches:
            return web.json_response(_error_body("no such batch", 404), status=404)
        self.status_checks += 1
        if self.status_errors > 0:
            self.status_errors -= 1
            return web.json_response(_error_body("upstream hiccup", 500), status=500)
        batch = self.batches[batch_id]
        if batch["status"] not in ("completed", "expired", "failed", "cancelled"):
            self._checks[batch_id] += 1
            batch["status"] = "in_progress"
            if self._checks[batch_id] > self.polls:
                self._finish(batch)
        return web.json_response(self._public(batch_id))

    def _public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    # ------------------------------------------------------------------ running a batch

    def _finish(self, batch: dict[str, Any]) -> None:
        outcome = batch["_outcome"]
        if outcome == "failed":
            batch["status"] = "failed"
            batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "scripted failure",
                                                           "line": 1}]}
            return
        runs = int(outcome.split(":")[1]) if outcome.startswith("expired:") else None
        output, errors, done, failed = [], [], 0, 0
        for k, text in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            line = json.loads(text)
            if runs is not None and k >= runs:
                errors.append({"id": f"req_{k}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired", "message": "not run before the window closed"}})
                failed += 1
                continue
            self.ran.append(line["body"])
            reply = _as_reply(self.handler(line["body"]))
            if reply.status == 200:
                body = self._completions._completion(line["body"], reply)
                output.append({"id": f"req_{k}", "custom_id": line["custom_id"],
                               "response": {"status_code": 200, "request_id": f"r{k}", "body": body}, "error": None})
                done += 1
            else:
                errors.append({"id": f"req_{k}", "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": reply.status, "request_id": f"r{k}",
                                            "body": _error_body(reply.error_message or "refused", reply.status)}})
                failed += 1
        batch["status"] = "expired" if runs is not None else "completed"
        batch["request_counts"] = {"total": done + failed, "completed": done, "failed": failed}
        for key, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                file_id = f"file-{next(self._ids)}"
                self.files[file_id] = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode()
                batch[key] = file_id
