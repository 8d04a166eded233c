"""Apply a perturbation kind to writings: one entry point for rule-based and LLM kinds.

Seeds are derived per (base seed, item, model, kind) by hashing, so a writing gets the same
perturbation whatever else is in the batch and in whatever order it is processed.
Perturbed writings keep the release layout (infer_id, model, output) with the model renamed
`<model>+<kind>`, so every judge, the runner's resume key and the leaderboard treat them as
one more model; `source_model`, `base_seed` and the `perturbation` record ride along as extra
fields. Failed perturbations are returned separately and never become writings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Literal

from howtobench.concurrency import gather_or_cancel
from howtobench.data.models import Writing
from howtobench.errors import ConfigError
from howtobench.llm.types import LLMClient
from howtobench.robustness.perturb import RULES, PerturbContext, Perturbed
from howtobench.robustness.transfer import TRANSFER_KINDS, transfer
from howtobench.suggest import unknown_name


class _AllKinds(Sequence[str]):
    """Every perturbation kind: the registered rules (plugins included, read on first use), then the transfers."""

    def __getitem__(self, index: int) -> str:  # type: ignore[override]  # no slices asked of it
        return (*RULES, *TRANSFER_KINDS)[index]

    def __len__(self) -> int:
        return len(RULES) + len(TRANSFER_KINDS)


ALL_KINDS: Sequence[str] = _AllKinds()
PAPER_KINDS: tuple[str, ...] = ("drop", "repeat", *TRANSFER_KINDS)
Expectation = Literal["down", "anchor"]


def expectation(kind: str) -> Expectation:
    """What a sound judge should do: the reference control lands near the anchor; all else scores lower."""
    return "anchor" if kind == "reference" else "down"


def derive_seed(base_seed: int, item_id: str, model: str, kind: str) -> int:
    """A 63-bit seed from the base seed and the writing's identity (order-independent)."""
    blob = json.dumps([base_seed, item_id, model, kind], ensure_ascii=False).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


def check_kinds(kinds: Sequence[str]) -> list[str]:
    """Validate kind names against the registry (clear error listing the valid ones)."""
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown:  # one message per unknown name, each with its did-you-mean (`--kind trunc`: truncate)
        raise ConfigError("; ".join(unknown_name("perturbation kind", k, ALL_KINDS) for k in unknown))
    return list(kinds)


async def perturb_text(
    kind: str, text: str, seed: int, ctx: PerturbContext, client: LLMClient | None = None
) -> Perturbed:
    """Perturb one text; LLM kinds need a client."""
    if kind in RULES:
        return RULES[kind](text, seed, ctx)
    if kind in TRANSFER_KINDS:
        if client is None:
            raise ConfigError(f"{kind} rewrites with an LLM: configure a writer endpoint")
        return await transfer(text, seed, ctx, client, kind.removeprefix("transfer-"))
    raise ConfigError(f"unknown perturbation kind {kind}; choose from {', '.join(ALL_KINDS)}")


def perturbed_writing(source: Writing, kind: str, base_seed: int, result: Perturbed) -> Writing:
    """The perturbed text as a writing in the release layout, with its provenance."""
    return Writing.model_validate({
        **(source.model_extra or {}),
        "infer_id": source.item_id,
        "model": f"{source.model}+{kind}",
        "output": result.text or "",
        "source_model": source.model,
        "base_seed": base_seed,
        "perturbation": result.record.model_dump(mode="json"),
    })


async def perturb_one(writing: Writing, kind: str, base_seed: int, context: Callable[[Writing], PerturbContext],
                      client: LLMClient | None = None) -> tuple[Writing, bool]:
    """One writing perturbed with `kind`: (the perturbed writing, or the failed one as a record; whether it
    succeeded). The seed is the writing's own (`derive_seed`), so the result does not depend on the batch."""
    seed = derive_seed(base_seed, writing.item_id, writing.model, kind)
    result = await perturb_text(kind, writing.output, seed, context(writing), client)
    return perturbed_writing(writing, kind, base_seed, result), result.record.status == "ok"


async def perturb_writings(
    writings: Sequence[Writing],
    kind: str,
    base_seed: int,
    context: Callable[[Writing], PerturbContext],
    client: LLMClient | None = None,
) -> tuple[list[Writing], list[Writing]]:
    """Perturb every writing with one kind at once; returns (perturbed writings, failed ones as records).

    For a set kept whole (the robustness suite, the dry run's plan); `perturb_file` runs `perturb_one` through the
    step layer's runner loop instead, appending each result the moment it is made."""
    done = await gather_or_cancel(*(perturb_one(w, kind, base_seed, context, client) for w in writings))
    return [w for w, ok in done if ok], [w for w, ok in done if not ok]
