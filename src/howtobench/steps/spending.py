"""Whether a command spends money: the one answer every model-calling command (judge, generate, run, build,
perturb, robustness, calibrate) asks before deciding to show its estimate, ask above --confirm-above and keep
--max-cost (`cli/money.estimate_first`).

Each command names the endpoints it will actually call a model on (role -> endpoint, the same mapping its
preflight checks): a metric judges with no model, perturb's non-transfer kinds rewrite with none, a build step
may need none. Before, each command wrote its own expression over those, and they differed (calibrate forgot that
a metric method calls no model; generate, judge and run alone knew that batch files send nothing); the rule now
lives here once.
"""

from __future__ import annotations

from collections.abc import Mapping

from howtobench.config import EndpointConfig
from howtobench.llm.client import CacheMode


def spends_money(calls: Mapping[str, EndpointConfig | None], *, cache_mode: CacheMode,
                 files: object | None = None) -> bool:
    """True when the step sends paid calls: one of `calls` is an endpoint the user configured, and its calls go
    out (live, or through the batch API at its rate).

    Free: the embedded local model (an endpoint of None); --replay (every answer comes from the cache, a miss
    stops the run); batch `files` (the requests are written for the user's own engine, nothing is sent). A call
    already in the cache is free too, but that is the estimate's business (it prices cached calls at $0), not
    this answer's: with the cache on, a configured endpoint may still be paid.
    """
    if cache_mode == "replay" or files is not None:
        return False
    return any(endpoint is not None for endpoint in calls.values())
