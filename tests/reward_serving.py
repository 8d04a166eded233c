"""Helpers of the scoring-server tests: a running `howtobench serve` app in this process, over a fake judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from fake_server import FakeServer
from howtobench.config import EndpointConfig
from howtobench.serve.app import ServeState, build_app
from howtobench.serve.setup import ServeSettings, open_service

GUIDE = "guide/infer_354"  # a Guide item of the release (its human reference is used)


def judge_calls(server: FakeServer) -> list[dict[str, Any]]:
    """The judge calls the fake judge received (the preflight's "ping" left out)."""
    return [r for r in server.requests if r.get("response_format")]


def endpoint_of(server: FakeServer, **extra: Any) -> EndpointConfig:
    return EndpointConfig(model="fake-judge", base_urls=(server.base_url,), concurrency=16, **extra)


def settings_for(server: FakeServer, workspace: Path, data: Path | None, **extra: Any) -> ServeSettings:
    return ServeSettings(endpoint=endpoint_of(server), workspace=workspace, data_dir=data, **extra)


@dataclass
class Running:
    """A started app: its base URL, its state and an open HTTP session to it."""

    url: str
    state: ServeState
    http: aiohttp.ClientSession

    async def post(self, path: str, body: Any) -> tuple[int, Any, aiohttp.ClientResponse]:
        async with self.http.post(self.url + path, data=json.dumps(body)) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text), resp
            except ValueError:
                return resp.status, text, resp

    async def get(self, path: str) -> tuple[int, str]:
        async with self.http.get(self.url + path) as resp:
            return resp.status, await resp.text()


@asynccontextmanager
async def running(settings: ServeSettings, *, ready: bool = True) -> AsyncIterator[Running]:
    """The app on 127.0.0.1 and a free port (`ready`: as after the judge answered its preflight)."""
    async with open_service(settings) as (state, _client):
        state.health.ready = ready
        runner = web.AppRunner(build_app(state), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        try:
            async with aiohttp.ClientSession() as http:
                yield Running(f"http://{host}:{port}", state, http)
        finally:
            await runner.cleanup()


def openrlhf_body(prompt: str, responses: list[str], label: Any, end: str = "<|im_end|>") -> dict[str, Any]:
    """What OpenRLHF sends for these rollouts: decoded prompt + response tokens (special tokens kept)."""
    return {"query": [prompt + r + end for r in responses], "prompts": [prompt] * len(responses),
            "labels": [label] * len(responses)}


class ServeProcess:
    """`howtobench serve` in a child process (as a trainer's cluster would run it): its URL from stdout."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None, *, drain: bool = False) -> None:
        self.args, self.env, self.drain = args, env, drain
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> ServeProcess:
        cmd = [sys.executable, "-m", "howtobench", "serve", "--port", "0", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(self.env or {})})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            _, err = self.proc.communicate()
            raise RuntimeError(f"serve did not start: {line!r} {err[-2000:]}")
        self.url = line
        self.stderr_tail: deque[str] = deque(maxlen=200)
        if self.drain:  # read as it comes: a server that logs much (a judge answering garbage) would otherwise fill
            # the pipe and block on its next write, stalling every request; `stderr_tail` keeps the last lines
            threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        self.wait_healthy()
        return self

    def _drain(self, stream: Any) -> None:
        for line in stream:
            self.stderr_tail.append(line)

    def wait_healthy(self, timeout_s: float = 60.0) -> None:
        until = time.monotonic() + timeout_s
        while time.monotonic() < until:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("serve never became healthy")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: no cleanup of any kind
        self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


def serve_args(server_url: str, workspace: Path, *extra: str) -> list[str]:
    return ["--judge-base-url", server_url, "--judge-model", "fake-judge", "--judge-concurrency", "16",
            "--workspace", str(workspace), *extra]
