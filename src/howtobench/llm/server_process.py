"""A model server run as our child process: started, proven ready, watched, stopped.

Ready means a real answer: a one-token chat completion succeeds. `/models` answers as soon as the HTTP
server is up, before the first completion — which is exactly where a broken llama.cpp build crashes.

Watched means a run notices at once when the server dies: `stop_when_it_dies` cancels the task that
uses the server as soon as the process exits and turns whatever that task was doing into `ServerDied`,
whose message names the cause (exit status or signal) and ends with the tail of the server's log. The
judge runner and the generator treat it like any run-level error (errors.py): calls in flight are
cancelled, no row is written for them, the command exits non-zero, and a re-run resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from howtobench.errors import LLMError, ServerDied
from howtobench.http import new_session

WATCH_EVERY_S = 0.1  # how often the watcher looks at the process (a waitpid(WNOHANG) each time)
TAIL_LINES = 15
_SIGNAL_HINTS = {"SIGSEGV": "a crash inside llama.cpp", "SIGKILL": "killed: out of memory, or by hand",
                 "SIGABRT": "llama.cpp aborted"}
"""By signal name: Windows' signal module has no SIGKILL, and importing this module must not fail there."""


def _die_with_parent() -> None:
    """Linux: the server is killed if this process dies, even by SIGKILL (no orphaned model servers).

    SIGKILL rather than SIGTERM: uvicorn's graceful shutdown waits for in-flight generations, which
    can take minutes on this CPU, and the server holds nothing worth a clean exit.
    """
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class ServerProcess:
    """One running server: its process, base URL and log file."""

    proc: subprocess.Popen[bytes]
    base_url: str
    log: Path

    @classmethod
    def start(cls, command: Sequence[str], base_url: str, log: Path) -> ServerProcess:
        """Start `command` with stdout and stderr into `log`, in its own session: a Ctrl-C in the terminal reaches
        us, and we stop the server — it never dies first and looks like a crash."""
        with log.open("wb") as out:
            proc = subprocess.Popen(
                list(command), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
            )
        return cls(proc, base_url, log)

    @property
    def dead(self) -> bool:
        return self.proc.poll() is not None

    def cause(self) -> str:
        """How the process ended, in words (call once it is dead)."""
        code = self.proc.poll()
        if code is None:
            return "is still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                sig = signal.Signals(-code)
                hint = _SIGNAL_HINTS.get(sig.name)
                return f"was killed by signal {sig.name}" + (f" ({hint})" if hint else "")
            return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def tail(self, lines: int = TAIL_LINES) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return "(no server log)"

    def died_error(self, when: str) -> ServerDied:
        """`ServerDied`: one line naming the server and the cause, then the last lines of its log."""
        return ServerDied(f"{self.base_url}: the local model server {self.cause()} {when}; "
                          f"the last lines of its log ({self.log}):\n{self.tail()}")

    def stop(self, grace_s: float = 5.0) -> None:
        """Terminate, then kill if it does not exit within `grace_s`."""
        if self.dead:
            return
        self.proc.terminate()
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    async def wait_until_ready(self, model: str, timeout_s: float) -> None:
        """Return once a one-token chat completion succeeds; raise if the server dies or never answers."""
        deadline = time.monotonic() + timeout_s
        last = "no answer yet"
        async with new_session() as http:
            while time.monotonic() < deadline:
                if self.dead:
                    raise self.died_error("while starting")
                answered, last = await _tiny_completion(http, self.base_url, model, deadline - time.monotonic())
                if answered:
                    return
                await asyncio.sleep(0.2)
        raise LLMError(f"{self.base_url}: the local model server gave no completion within {timeout_s:g} s "
                       f"({last}); the last lines of its log ({self.log}):\n{self.tail()}")


async def _tiny_completion(http: aiohttp.ClientSession, base_url: str, model: str, budget_s: float
                           ) -> tuple[bool, str]:
    """(True, "") when the server completes a one-token chat; else (False, why not)."""
    body = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0}
    try:
        async with http.post(base_url + "/chat/completions", json=body,
                             timeout=aiohttp.ClientTimeout(total=max(1.0, budget_s))) as resp:
            if resp.status != 200:
                return False, f"HTTP {resp.status}"
            data = await resp.json(content_type=None)
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
        return False, type(exc).__name__
    ok = isinstance(data, dict) and bool(data.get("choices"))
    return ok, "" if ok else "a completion without choices"


@asynccontextmanager
async def stop_when_it_dies(server: ServerProcess) -> AsyncIterator[None]:
    """Run the block; if the server dies meanwhile, stop the block at once and raise `ServerDied` instead.

    The watcher cancels the current task when the process exits; whatever the block raises while the server
    is dead (that cancellation, or a connection error that came first) becomes `ServerDied`.
    """
    task = asyncio.current_task()
    assert task is not None, "stop_when_it_dies needs a running task"
    died = asyncio.Event()

    async def watch() -> None:
        while not server.dead:
            await asyncio.sleep(WATCH_EVERY_S)
        died.set()
        task.cancel()

    watcher = asyncio.ensure_future(watch())
    failure: BaseException | None = None
    try:
        yield
    except BaseException as exc:
        if not server.dead or (isinstance(exc, asyncio.CancelledError) and not died.is_set()):
            raise  # not about the server (a Ctrl-C is a cancellation the watcher did not make)
        failure = exc
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    if died.is_set():
        await _absorb_our_cancellation(task, delivered=isinstance(failure, asyncio.CancelledError))
    if failure is not None or died.is_set():
        raise server.died_error("during the run") from failure


async def _absorb_our_cancellation(task: asyncio.Task[object], *, delivered: bool) -> None:
    """The watcher cancelled `task` once: make sure that cancellation is spent, and take it back (3.11+)."""
    if not delivered:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)  # a pending cancellation is delivered at the next step
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()
