"""The guard's series in `/metrics`: what a policy gaming its reward shows before the judge's scores move.

Per signal, its mean over the last `WINDOW` guarded samples (`howtobench_guard_signal_mean{signal}`: responses
growing, repetition or set phrases creeping up); per rule, the share of those samples it flags
(`howtobench_guard_flag_rate{rule}`); and the samples answered without a judge call (`howtobench_guard_skipped`,
by the rules that skipped them).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from howtobench.guard.guard import guard_record, is_skipped
from howtobench.guard.rules import RULE_NAMES
from howtobench.judges.base import Judgment


class GuardMetrics:
    """The guard's collectors on a server's registry; `window` keeps the running means (serve.metrics._Window)."""

    def __init__(self, registry: CollectorRegistry, window: object, size: int) -> None:
        self._window = window
        self.signal_mean = Gauge("howtobench_guard_signal_mean", f"Mean of each guard signal over the last {size} "
                                 "guarded samples", ["signal"], registry=registry)
        self.flag_rate = Gauge("howtobench_guard_flag_rate", f"Share of the last {size} guarded samples each guard "
                               "rule flags", ["rule"], registry=registry)
        self.skipped = Counter("howtobench_guard_skipped", "Samples answered without any judge call (--guard skip), "
                               "by each rule that skipped them", ["rule"], registry=registry)

    def observe(self, judgment: Judgment | None) -> None:
        """Record the guard's verdict on one finished sample (nothing when it was not guarded)."""
        record = guard_record(judgment)
        if record is None:
            return
        add = self._window.add  # type: ignore[attr-defined]
        for name, value in (record.get("signals") or {}).items():
            if value is not None:
                self.signal_mean.labels(signal=name).set(add("\0guard:" + name, float(value)))
        flags = set(record.get("flags") or [])
        for rule in RULE_NAMES:
            self.flag_rate.labels(rule=rule).set(add("\0guard-rule:" + rule, float(rule in flags)))
        for rule in record.get("skipped_by") or []:
            self.skipped.labels(rule=rule).inc()

    @staticmethod
    def skipped_judgment(judgment: Judgment) -> bool:
        return is_skipped(judgment)
