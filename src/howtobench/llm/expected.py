"""The expected size of the replies a plan will get: what an estimate a user can believe rests on.

The upper bound of a plan prices every reply at its `max_tokens` (4,096 for a ToW leaf): right for `--max-cost`
and `--confirm-above`, which must never be exceeded, but six times what judging really costs. The expected
figure takes, per call, in this order:

1. the mean completion tokens of this model's earlier answered calls of the same purpose in the call log (its
   own analyses of `leaf:logic`, its own writings): the best guess there is, once the model has been called;
2. else a stated typical size: a JSON reply whose text fields carry `TYPICAL_REASON_CHARS` characters (at most
   what the schema allows), or what the caller knows of a free-text reply (a writing about as long as the
   item's human reference);
3. else the call's `max_tokens`.

Every figure is capped at the call's `max_tokens`, and the estimate says which basis it used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from howtobench.llm.pricing import completion_budget
from howtobench.llm.types import ChatRequest

TYPICAL_REASON_CHARS = 400
"""Characters of a typical judge's analysis or reason per JSON field (no reasoning aloud)."""


@dataclass(frozen=True)
class ReplySizes:
    """Mean completion tokens per purpose of one model's earlier answered calls (from the call log)."""

    model: str
    by_purpose: dict[str, float] = field(default_factory=dict)
    calls: int = 0


def reply_sizes(workspace: Path | None, model: str) -> ReplySizes:
    """What `model` answered before in `workspace`'s call log (fresh, successful calls); empty without a log."""
    from howtobench.llm.cache import DB_NAME, CallStore

    if workspace is None or not (workspace / DB_NAME).is_file():
        return ReplySizes(model)
    store = CallStore.open(workspace)
    try:
        rows = store.rows("SELECT purpose, AVG(completion_tokens) AS mean, COUNT(*) AS n FROM calls WHERE model = ? "
                          "AND status = 'ok' AND from_cache = 0 AND completion_tokens > 0 GROUP BY purpose", (model,))
    finally:
        store.close()
    return ReplySizes(model, {r["purpose"]: float(r["mean"]) for r in rows}, sum(int(r["n"]) for r in rows))


def expected_completions(requests: Sequence[ChatRequest], sizes: ReplySizes | None = None,
                         typical: Sequence[int | None] | None = None) -> list[int]:
    """Each request's expected completion tokens by the module docstring's rule (`typical`: the caller's guess per
    request for a reply without schema, e.g. a writing as long as its reference)."""
    known = sizes.by_purpose if sizes else {}
    guesses = list(typical) if typical is not None else [None] * len(requests)
    out = []
    for request, guess in zip(requests, guesses, strict=True):
        bound = completion_budget(request, ceiling=False)
        if request.purpose in known:
            out.append(min(bound, round(known[request.purpose])))
        elif request.response_schema is not None:
            out.append(completion_budget(request, ceiling=True, text_chars=TYPICAL_REASON_CHARS))
        else:
            out.append(bound if guess is None else min(bound, guess))
    return out


def basis_text(requests: Sequence[ChatRequest], sizes: ReplySizes | None, typical: bool = False) -> str:
    """Where the expected reply sizes come from, in words the estimate prints."""
    purposes = {r.purpose for r in requests}
    known = purposes & set(sizes.by_purpose) if sizes else set()
    if known == purposes and sizes:
        return f"reply sizes of {sizes.calls:,} earlier calls of {sizes.model} in the call log"
    parts = [f"{len(known)} of {len(purposes)} purposes from earlier calls of {sizes.model}"] if known and sizes \
        else []
    if any(r.response_schema is not None and r.purpose not in known for r in requests):
        parts.append(f"JSON replies with ~{TYPICAL_REASON_CHARS}-character reasons per field (typical; no earlier "
                     "call in the call log)")
    if any(r.response_schema is None and r.purpose not in known for r in requests):
        parts.append("writings as long as their item's human reference" if typical else
                     "free-text replies at their max_tokens")
    return "; ".join(parts)
