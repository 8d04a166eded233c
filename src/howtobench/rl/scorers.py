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
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiohttp

from howtobench.config import REWARD_URL_ENV, EndpointConfig, env, proxy_for, resolve_workspace
from howtobench.errors import ConfigError, EndpointError
from howtobench.guard.guard import GUARD_KEYS, adapter_guard
from howtobench.http import new_session
from howtobench.judges.job import judge_options, parse_judge_options, prompt_language_for, with_judge_options
from howtobench.redact import redact_text, redact_url
from howtobench.serve.answers import score_answer
from howtobench.serve.app import BadRequest, ServeState, score_entries
from howtobench.serve.service import DEFAULT_DEADLINE_S, DEFAULT_MAX_PENDING
from howtobench.serve.setup import ServeSettings, open_service
from howtobench.suggest import unknown_name

T = TypeVar("T")
ENDPOINT_KEYS = ("judge_base_url", "judge_model", "judge_api_key_env", "judge_concurrency", "judge_timeout")
SETTING_KEYS = ("workspace", "data", "method", "tree", "no_reference", "renormalize", "prompt_language",
                "judge_option", "failed_reward", "deadline_s", "max_pending", *GUARD_KEYS)
KNOWN_KEYS = ("reward_url", *ENDPOINT_KEYS, *SETTING_KEYS)
TRAINER_KEYS = frozenset({"reward_router_address", "reward_model_tokenizer"})  # verl's, for its own reward models
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


class RemoteScorer:
    """`POST /v1/score` on a running `howtobench serve`; 429 is waited out (Retry-After), up to `MAX_WAIT_S`."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/").removesuffix("/get_reward").removesuffix("/v1/score")
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
                        return dict(await resp.json())
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
        return score_answer(await state.service.score(entries, deadline), state.tree_names)

    async def close(self) -> None:
        await self._stack.aclose()

    async def _open(self) -> ServeState:
        async with self._opening:
            if self._state is None:
                opened, _ = await self._stack.enter_async_context(open_service(self.settings))
                self._state = opened
                return opened
            return self._state


def check_arguments(kwargs: Mapping[str, Any]) -> None:
    """A misspelt adapter argument is an error with did-you-mean, not ignored."""
    unknown = sorted(set(kwargs) - set(KNOWN_KEYS) - TRAINER_KEYS)
    if unknown:
        raise ConfigError(unknown_name("howtobench reward argument", unknown[0], KNOWN_KEYS))


def scorer_for(kwargs: Mapping[str, Any]) -> Scorer:
    """The process's scorer for these adapter arguments (module docstring of `howtobench.rl`)."""
    check_arguments(kwargs)
    given = {k: v for k, v in kwargs.items() if k in KNOWN_KEYS and v is not None}
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in given.items()))
    with _lock:
        scorer = _scorers.get(key)
        if scorer is None:
            scorer = _scorers[key] = _new_scorer(given)
        return scorer


def _new_scorer(given: dict[str, Any]) -> Scorer:
    url = given.get("reward_url") or (None if "judge_base_url" in given else env(REWARD_URL_ENV))
    if url:
        return RemoteScorer(str(url))
    if "judge_base_url" not in given or "judge_model" not in given:
        raise ConfigError(f"howtobench reward: give reward_url (a running `howtobench serve`, or ${REWARD_URL_ENV}) "
                          "or judge_base_url and judge_model to judge in this process")
    return LocalScorer(local_settings(given))


def local_settings(given: dict[str, Any]) -> ServeSettings:
    """The in-process service's settings from adapter arguments (the names of `howtobench serve`'s flags)."""
    urls = given["judge_base_url"]
    endpoint = EndpointConfig.model_validate({
        "model": given["judge_model"], "base_urls": [urls] if isinstance(urls, str) else list(urls),
        "api_key_env": given.get("judge_api_key_env"), "concurrency": given.get("judge_concurrency"),
        **({"timeout_s": given["judge_timeout"]} if "judge_timeout" in given else {})})
    data, method = given.get("data"), str(given.get("method", "tow"))
    return ServeSettings(
        endpoint=endpoint, workspace=resolve_workspace(given.get("workspace")),
        data_dir=Path(data) if data else None, method=method,
        options=with_judge_options(method, judge_options(
            renormalize=bool(given.get("renormalize")), tree=given.get("tree"),
            prompt_language=prompt_language_for(method, given.get("prompt_language"))),
            parse_judge_options(given.get("judge_option"))),
        no_reference=bool(given.get("no_reference")), failed_reward=given.get("failed_reward"),
        deadline_s=float(given.get("deadline_s", DEFAULT_DEADLINE_S)),
        max_pending=int(given.get("max_pending", DEFAULT_MAX_PENDING)), run_id="rl", guard=adapter_guard(given))
