"""How many calls go in flight per base URL when the user does not fix it (`--concurrency auto`, the default).

Why: a fixed default is wrong for almost every server. 8 used an eighth of a 64-slot judge (issue 37: 0.12 of
its capacity); a number large enough for a vLLM node floods a rate-limited API with 429s. Users of a harness
should not need to know their server's batch size, so each base URL gets a limit found while running, the way
TCP finds a window and Netflix's concurrency-limits (AIMD, Gradient2) find a server's concurrency:

- slow start: the limit starts at `START` and grows by one per successful call sent while the URL was at least
  half full (doubling per round trip), until the first sign of overload;
- then additive increase: one per round trip (1/limit per successful call), again only while the limit is used,
  so an idle client never talks itself up to the cap;
- multiplicative decrease on overload: a 429, 503, 504 or 529 or a timeout sets the limit to `BACKOFF` x the
  calls in flight when the refused call was sent, if lower (a server that refuses past K in flight is answered
  with about K, however high slow start had gone); the mean latency of a window of about one round trip of calls
  grown past `TOLERANCE` x the lowest window mean of the last `BASE_WINDOWS`, while the calls per second
  (Little's law: calls in flight / latency) did not follow the calls in flight up (`GAIN`), lowers it in
  proportion: a queue at the server, whose latency grows with the calls in flight and whose throughput does not.
  Latency that grows with throughput is an inference server batching more (its steps slow down as the batch
  fills): there more calls still pay, up to its batch. One decrease per round trip: a sign from a call sent
  before the last decrease is old news.

Every `BASE_WINDOWS` windows one window runs at half the limit and its mean becomes the baseline (as BBR probes
its round-trip time): a baseline that merely aged out would let a settled queue pass for the server's latency,
and the level would creep up to the cap; one that never aged would hold a server that got slower (other
tenants) down to one call.

`auto:N` caps the limit at N (`EndpointConfig.max_concurrency`, default 1,024, lowered where the open-file limit
leaves less room: `open_files.py`); a number fixes it (no limiter).
The level is shown in the progress line (`levels_text`) and as the `howtobench_judge_concurrency` gauge of
`serve`'s /metrics. Small Python packages offering AIMD exist (ace-concurrency, adaptive-concurrency,
aimd-limiter: each a 0.1 release) but none knows our per-URL slot pool and circuit breaker (`limits.py`), which
this drives through `SlotPool.resize`; the algorithm is kept here, small, and tested (tests/llm/test_adaptive.py).
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from howtobench.config import DEFAULT_MAX_CONCURRENCY, EndpointConfig
from howtobench.llm.limits import SlotPool
from howtobench.llm.open_files import connections_that_fit

START = 32  # calls in flight per URL before anything is known: slow start doubles it each round trip
BACKOFF = 0.9  # the limit kept on an overload (Netflix's AIMD default): a 429 past K settles at 0.9 K .. K
TOLERANCE = 2.0  # window mean latency over the lowest recent one that counts as queueing at the server
BASE_WINDOWS = 100  # windows over which the lowest mean latency is the baseline; then it is measured afresh
GAIN = 0.2  # the share of a rise in calls in flight that throughput must follow for latency growth to be welcome
MIN_WINDOW = 16  # calls per latency window, at least (else half the limit when it opens)
OVERLOAD_STATUS = frozenset({429, 503, 504, 529})  # rate limited, unavailable, gateway timeout, overloaded


def overload(status: int | None, transport_kind: str | None = None) -> bool | None:
    """Does this outcome say the server has too much to do? True: overloaded (429, 503, 504, 529, a timeout);
    False: it answered something else; None: it tells nothing of the load (a refused or dropped connection, a
    cancelled call: the circuit breaker of `limits.py` deals with dead URLs)."""
    if transport_kind is not None:
        return True if transport_kind == "timeout" else None
    if status is None:
        return None
    return status in OVERLOAD_STATUS


@dataclass
class Sent:
    """One call in flight, as its URL's limiter saw it go out."""

    url: int
    at: float
    in_flight: int  # calls in flight on its URL once it was sent (itself included)
    epoch: int  # the URL's count of decreases when it was sent


class UrlLimit:
    """The adaptive limit of one base URL (see the module docstring); `value` is what the slot pool applies."""

    def __init__(self, start: int = START, cap: int = DEFAULT_MAX_CONCURRENCY) -> None:
        self.cap = max(1, cap)
        self.limit = float(min(start, self.cap))
        self.in_flight = 0
        self.slow_start = True
        self.epoch = 0
        self._window: list[tuple[float, int]] = []  # (latency, calls in flight when sent) of its calls
        self._window_epoch = 0
        self._window_size = MIN_WINDOW
        self._probe_from: float | None = None  # the limit to go back to after a probe window
        self._means: deque[float] = deque(maxlen=BASE_WINDOWS)
        self._rates: deque[tuple[float, float]] = deque(maxlen=BASE_WINDOWS)  # (calls in flight, calls/s) per window

    @property
    def value(self) -> int:
        return max(1, int(self.limit))

    def sent(self) -> tuple[int, int]:
        self.in_flight += 1
        return self.in_flight, self.epoch

    def done(self, sent: Sent, latency_s: float, overloaded: bool | None) -> None:
        """Record a finished call: `overloaded` True/False, or None when it tells nothing (cancelled, refused)."""
        in_use = 2 * self.in_flight >= self.limit  # the limit is in use (counting this call): more may help
        self.in_flight -= 1
        if overloaded is None:
            return
        if overloaded:
            self._decrease(sent)
            return
        if in_use:
            self.limit = min(self.cap, self.limit + (1.0 if self.slow_start else 1.0 / self.limit))
        self._measure(latency_s, sent)

    def _decrease(self, sent: Sent, to: float | None = None) -> None:
        """Overload: the limit becomes `to`, or BACKOFF x the calls in flight when the overloaded one was sent."""
        if sent.epoch != self.epoch:
            return  # sent before the last decrease: that one already answered it
        self.limit = max(1.0, min(self.limit, to if to is not None else BACKOFF * sent.in_flight))
        self.slow_start = False
        self.epoch += 1
        self._window.clear()

    def _measure(self, latency_s: float, sent: Sent) -> None:
        """Windows of about one round trip of calls; see `_queueing` for what makes one a sign of a queue."""
        if sent.epoch != self.epoch:
            return  # sent before the last change of course: its latency belongs to the old level
        if self._window_epoch != self.epoch:
            self._window.clear()
            self._window_epoch = self.epoch
        if not self._window:  # its size is fixed when it opens (slow start would outgrow a moving one)
            self._window_size = max(MIN_WINDOW, self.value // 2)
        self._window.append((latency_s, sent.in_flight))
        if len(self._window) < self._window_size:
            return
        mean = sum(lat for lat, _ in self._window) / len(self._window)
        calls = sum(n for _, n in self._window) / len(self._window)  # mean calls in flight as they were sent
        self._window.clear()
        if self._probe_from is not None:  # the probe's window: its mean is the baseline now; the limit back
            self._means.clear()
            self._means.append(mean)
            self.limit, self._probe_from = max(self.limit, self._probe_from), None
            return
        base = min(self._means, default=mean)
        self._means.append(mean)
        queueing = mean > TOLERANCE * base and self._throughput_flat(calls, calls / mean)
        self._rates.append((calls, calls / mean))
        if queueing:  # gradient: down in proportion to the excess (latency ~ calls once queued)
            self._decrease(sent, self.limit * max(0.5, min(BACKOFF, TOLERANCE * base / mean)))
        elif len(self._means) == BASE_WINDOWS and not self.slow_start:
            self._probe()

    def _throughput_flat(self, calls: float, rate: float) -> bool:
        """Did the calls per second (Little's law: calls in flight / latency) fail to follow the calls in flight
        up since the last window with a quarter fewer? Latency that grows while throughput grows is the server
        batching more (an inference server's steps slow down as its batch fills and prompts are prefilled): more
        calls still pay. Latency that grows while throughput stays is a queue: they do not."""
        for before, then in reversed(self._rates):
            if before * 1.25 <= calls:
                return rate < then * (1 + GAIN * (calls / before - 1))
        return False  # nothing to compare with yet
    def _probe(self) -> None:
        """The baseline is about to age out: one window at half the limit measures it afresh (BBR's ProbeRTT),
        so a queue the level has settled into is not mistaken for the server's own latency. At the usual level
        (latency up to TOLERANCE x the baseline) half the limit still fills the server."""
        self._probe_from, self.limit = self.limit, max(1.0, self.limit / 2)
        self.epoch += 1


class Levels:
    """The limits of one endpoint's base URLs, applied to its slot pool as they change.

    `apply(url, n)` is the pool's `resize`; `labels` name the URLs as shown; `cap` is `max_concurrency`.
    """

    def __init__(self, labels: tuple[str, ...], cap: int, clock: Callable[[], float],
                 start: int = START, name: str = "") -> None:
        self.labels, self.name, self.cap = labels, name, cap
        self.urls = [UrlLimit(start, cap) for _ in labels]
        self._clock = clock
        self._apply: Callable[[int, int], None] = lambda _i, _n: None
        _LIVE.add(self)

    @property
    def start(self) -> int:
        return self.urls[0].value

    def attach(self, apply: Callable[[int, int], None]) -> None:
        self._apply = apply

    def sent(self, url: int) -> Sent:
        in_flight, epoch = self.urls[url].sent()
        return Sent(url, self._clock(), in_flight, epoch)

    def done(self, sent: Sent, overloaded: bool | None) -> None:
        limit = self.urls[sent.url]
        before = limit.value
        limit.done(sent, self._clock() - sent.at, overloaded)
        if limit.value != before:
            self._apply(sent.url, limit.value)

    def close(self) -> None:
        """The endpoint's client is closed: its level leaves the progress line."""
        _LIVE.discard(self)

    def values(self) -> dict[str, int]:
        return {label: u.value for label, u in zip(self.labels, self.urls, strict=True)}

    def total(self) -> int:
        return sum(u.value for u in self.urls)


_LIVE: weakref.WeakSet[Levels] = weakref.WeakSet()


def levels_text() -> str:
    """"calls at once: judge-model 64 (auto)" for the progress line; "" when every endpoint's level is fixed."""
    parts = sorted(f"{lv.name} {lv.total()}" for lv in list(_LIVE))
    return f"calls at once {', '.join(parts)} (auto)" if parts else ""


def slot_pool(endpoint: EndpointConfig, labels: tuple[str, ...]) -> tuple[SlotPool, Levels | None]:
    """The endpoint's slot pool, and with auto concurrency the levels that move its limits (None when fixed)."""
    if endpoint.concurrency is not None:
        return SlotPool(endpoint.base_urls, endpoint.concurrency, labels=labels), None
    per_url = connections_that_fit(endpoint.max_concurrency * len(labels)) // len(labels)
    levels = Levels(labels, max(1, per_url), time.monotonic, name=endpoint.model)
    pool = SlotPool(endpoint.base_urls, levels.start, labels=labels)
    levels.attach(pool.resize)
    return pool, levels
