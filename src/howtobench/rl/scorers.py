"""Where the adapters' samples are judged: a running `howtobench serve` (HTTP, `/v1/score`) or this process.

Both answer in the `/v1/score` shape, so the adapters do not care which. Trainers call rewards from threads
(verl's executor), from their own event loops (verl's reward loop, TRL's async loop) or plainly; the judge
client's sessions belong to one loop, so every scorer of a process lives on one background event loop
(`background()`), and callers submit to it — a sync call blocks on the answer, an async one awaits it.

One scorer per settings per process: every call of a trainer worker shares its judge client, its cache and its
weights negotiator, so concurrent samples of one instruction wait for one weights call. Across processes
(several Ray workers judging in-process on one workspace) only finished calls are shared, through the cache:
send the rollouts of one group to one process, or use the server.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
from collections.abc import Coroutine, Mapping
from contextlib import AsyncExitStack
from typing import Any, Protocol, TypeVar

import aiohttp
from pydantic import ValidationError

from howtobench.config import REWARD_URL_ENV, env, proxy_for
from howtobench.errors import ConfigError, EndpointError
from howtobench.http import new_session
from howtobench.redact import redact_text, redact_url
from howtobench.rl.arguments import RewardArguments
from howtobench.serve.answers import score_answer
from howtobench.serve.app import BadRequest, ServeState, score_entries
from howtobench.serve.contract import ScoreAnswer, describe
from howtobench.serve.service import DEFAULT_DEADLINE_S
from howtobench.serve.setup import ServeSettings, open_service

T = TypeVar("T")
MAX_WAIT_S = 600.0  # how long a refused (429) request keeps being retried before it is an error


class RewardServerError(EndpointError):
    """The scoring server refused the request or cannot be reached: every reward would fail alike."""


class Scorer(Protocol):
    async def score(self, samples: list[dict[str, Any]]) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class _Background:
    """An event loop in a daemon thread, shared by every scorer of the process."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="howtobench-rl", daemon=True).start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Block until `coro` finished on the background loop (a sync caller; never from that loop itself)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` run on the background loop from any other loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))


_lock = threading.Lock()
_background: _Background | None = None
_scorers: dict[tuple[Any, ...], Scorer] = {}


def background() -> _Background:
    global _background
    with _lock:
        if _background is None:
            _background = _Background()
            atexit.register(_close_all)
        return _background


def _close_all() -> None:
    """At exit: close every scorer's sessions and judge client (their last calls are committed already)."""
    with _lock:
        scorers, loop = list(_scorers.values()), _background
        _scorers.clear()
    if loop is not None and scorers:
        with contextlib.suppress(Exception):  # a trainer exiting on its own error: say nothing more
            asyncio.run_coroutine_threadsafe(_close(scorers), loop.loop).result(timeout=30)


async def _close(scorers: list[Scorer]) -> None:
    for scorer in scorers:
        await scorer.close()


REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=DEFAULT_DEADLINE_S * 4)  # past the server's own deadline


def checked(answer: Any, source: str) -> dict[str, Any]:
    """A `/v1/score` answer as the contract types it (`ScoreAnswer`): a server of another version fails here, in one
    line, not at a missing key in the trainer."""
    try:
        ScoreAnswer.model_validate(answer)
    except ValidationError as exc:
        raise RewardServerError(f"the scoring answer from {redact_url(source)} is not /v1/score's: "
                                f"{describe(exc)}") from None
    return dict(answer)


class RemoteScorer:
    """`POST /v1/score` on a running `howtobench serve`; 429 is waited out (Retry-After), up to `MAX_WAIT_S`."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/").removesuffix("/get_reward").removesuffix("/v1/score").removesuffix("/slime")
        self._http: aiohttp.ClientSession | None = None

    async def score(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        if self._http is None:
            self._http = new_session()  # the toolkit's one factory: its TLS, User-Agent and connect-timeout rules
        url = self.url + "/v1/score"
        until = time.monotonic() + MAX_WAIT_S
        while True:
            try:
                async with self._http.post(url, json={"samples": samples}, proxy=proxy_for(url),
                                           timeout=REQUEST_TIMEOUT) as resp:
                    if resp.status == 200:
                        return checked(await resp.json(), self.url)
                    text = (await resp.text()).strip()
                    wait = float(resp.headers.get("Retry-After", "1"))
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise RewardServerError(f"the scoring server at {redact_url(self.url)} cannot be reached: "
                                        f"{exc}") from exc
            if resp.status != 429 or time.monotonic() + wait > until:
                raise RewardServerError(redact_text(f"the scoring server at {redact_url(self.url)} answered "
                                                    f"{resp.status}: {text[:500]}"))
            await asyncio.sleep(wait)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()


class LocalScorer:
    """The server's service in this process (opened on first use, kept for the life of the process)."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self._state: ServeState | None = None
        self._opening = asyncio.Lock()
        self._stack = AsyncExitStack()

    async def score(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        state = await self._open()
        try:
            entries, deadline = score_entries({"samples": samples}, state.items)
        except BadRequest as exc:
            raise ConfigError(f"howtobench reward: {exc}") from exc
        return checked(score_answer(await state.service.score(entries, deadline), state.tree_names), "this process")

    async def close(self) -> None:
        await self._stack.aclose()

    async def _open(self) -> ServeState:
        async with self._opening:
            if self._state is None:
                opened, _ = await self._stack.enter_async_context(open_service(self.settings))
                self._state = opened
                return opened
            return self._state


def check_arguments(kwargs: Mapping[str, Any]) -> RewardArguments:
    """The adapter arguments, typed; every bad key named at once (`RewardArguments.of`)."""
    return RewardArguments.of(dict(kwargs))


def scorer_for(kwargs: Mapping[str, Any]) -> Scorer:
    """The process's scorer for these adapter arguments (module docstring of `howtobench.rl`)."""
    arguments = check_arguments(kwargs)
    with _lock:
        scorer = _scorers.get(arguments.key())
        if scorer is None:
            scorer = _scorers[arguments.key()] = _new_scorer(arguments)
        return scorer


def _new_scorer(arguments: RewardArguments) -> Scorer:
    url = arguments.reward_url or (None if arguments.judge_base_url or arguments.judge_provider
                                   else env(REWARD_URL_ENV))
    if url:
        return RemoteScorer(str(url))
    return LocalScorer(arguments.settings())
