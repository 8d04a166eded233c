"""What `GET /metrics` shows (Prometheus text, prometheus-client): load, latency, failures, and what the policy
is being rewarded for.

Besides requests, samples, latency and failures by kind, it keeps the mean of every leaf, node and root score
and of the response length over the last `WINDOW` judged samples: a policy learning to game the judge shows up
there first (responses growing while one leaf climbs and the others stay). Each server owns its registry, so
two servers in one process (the tests) do not share counters.
"""

from __future__ import annotations

from collections import deque

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from howtobench.errors import HowtobenchError
from howtobench.judges.base import Judgment

WINDOW = 1000
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 180, 300)


class _Window:
    """The mean of the last `WINDOW` values of each name, kept as a running sum (O(1) per value)."""

    def __init__(self) -> None:
        self.values: dict[str, deque[float]] = {}
        self.sums: dict[str, float] = {}

    def add(self, name: str, value: float) -> float:
        values = self.values.setdefault(name, deque())
        total = self.sums.get(name, 0.0) + value
        values.append(value)
        if len(values) > WINDOW:
            total -= values.popleft()
        self.sums[name] = total
        return total / len(values)


class ServeMetrics:
    """The server's Prometheus collectors, updated by the service and the routes."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("howtobench_requests", "HTTP requests answered, by route and status",
                                ["route", "status"], registry=r)
        self.samples = Counter("howtobench_samples", "Samples answered, by outcome: judged, failed (null reward), "
                               "deadline (null: not judged in time), rejected (label or query unusable)",
                               ["outcome"], registry=r)
        self.substituted = Counter("howtobench_substituted_rewards", "Failed samples given a --failed-reward "
                                   "substitute, by rule: group-mean, all-failed (the constant of a group with no "
                                   "judged sample), value", ["rule"], registry=r)
        self.refused = Counter("howtobench_refused_requests", "Requests answered 429 (over --max-queued)",
                               registry=r)
        self.judge_retries = Counter("howtobench_judge_retries", "Judgments tried again after a judge fault that "
                                     "may pass (refused connections, resets, 5xx, timeouts)", registry=r)
        self.failures = Counter("howtobench_failures", "Failures by kind (the error class)", ["kind"], registry=r)
        self.in_flight = Gauge("howtobench_samples_in_flight", "Samples admitted and not yet judged", registry=r)
        self.requests_in_flight = Gauge("howtobench_requests_in_flight", "Requests waiting for their answer",
                                        registry=r)
        self.queue_depth = Gauge("howtobench_judge_calls_waiting", "Judge calls waiting for a judge slot "
                                 "(queue depth)", registry=r)
        self.judge_concurrency = Gauge("howtobench_judge_concurrency", "Judge calls let in flight at once over "
                                       "every judge URL (with --judge-concurrency auto: the level found so far)",
                                       registry=r)
        self.judge_calls = Gauge("howtobench_judge_calls", "Judge calls made by this server (fresh, not cached)",
                                 registry=r)
        self.cache_hits = Gauge("howtobench_judge_cache_hits", "Judge calls answered from the call cache (or "
                                "shared with an identical call in flight)", registry=r)
        self.request_latency = Histogram("howtobench_request_seconds", "Time to answer a request", ["route"],
                                         buckets=LATENCY_BUCKETS, registry=r)
        self.sample_latency = Histogram("howtobench_sample_seconds", "Time to judge one sample",
                                        buckets=LATENCY_BUCKETS, registry=r)
        self.score_mean = Gauge("howtobench_score_mean", f"Mean score over the last {WINDOW} judged samples, per "
                                "root, node and leaf", ["name"], registry=r)
        self.length_mean = Gauge("howtobench_response_chars_mean", f"Mean response length (characters) over the "
                                 f"last {WINDOW} judged samples", registry=r)
        self._window = _Window()
        from howtobench.serve.guard_metrics import GuardMetrics  # here: guard_metrics reads this module's window

        self.guard = GuardMetrics(r, self._window, WINDOW)
        self._sample_seconds = deque[float](maxlen=WINDOW)

    def judged(self, judgment: Judgment | None, response: str, seconds: float,
               error: BaseException | None) -> None:
        """Record one finished sample (error: the run-level error it raised)."""
        if judgment is None:
            if error is not None:
                self.failures.labels(kind=type(error).__name__ if isinstance(error, HowtobenchError)
                                     else "bug").inc()
            return
        self.sample_latency.observe(seconds)
        self._sample_seconds.append(seconds)
        self.guard.observe(judgment)
        if judgment.status == "failed":
            if not self.guard.skipped_judgment(judgment):  # a skip is counted as howtobench_guard_skipped
                self.failures.labels(kind="judgment_failed").inc()
            return
        self.length_mean.set(self._window.add("\0length", float(len(response))))
        named = {"root": judgment.score, **judgment.nodes, **{leaf.name: leaf.score for leaf in judgment.leaves}}
        for name, value in named.items():
            if value is not None:
                self.score_mean.labels(name=name).set(self._window.add(name, value))

    def mean_sample_seconds(self) -> float:
        return sum(self._sample_seconds) / len(self._sample_seconds) if self._sample_seconds else 1.0

    def text(self) -> bytes:
        return generate_latest(self.registry)
