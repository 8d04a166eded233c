"""The scoring contract as types: what `serve`'s routes accept and what `/v1/score` answers, shared by the server
and the RL adapters (which send `/v1/score` bodies and read its answers, `rl/scorers.py`).

Every model refuses keys it does not know (`extra="forbid"`: a misspelt `deadline` is an error, not a default), and
a request's every problem is named at once in one line (`describe`), so a trainer's author fixes a body in one go.
Labels stay `Any` here: what a label may be is `samples.item_of`'s to say, per sample (a bad label fails its sample,
not the request).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from howtobench.suggest import unknown_name

Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
"""A positive, finite number of seconds (strict: `true` is not 1 s)."""


class Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GetRewardRequest(Contract):
    """OpenRLHF's remote reward body: the decoded prompt + response of each rollout, its prompt and its label."""

    query: list[str]
    prompts: list[str | None]
    labels: list[Any] | None = None

    @model_validator(mode="after")
    def _same_lengths(self) -> GetRewardRequest:
        for name, column in (("prompts", self.prompts), ("labels", self.labels)):
            if column is not None and len(column) != len(self.query):
                raise ValueError(f'"{name}" must be a list as long as "query" ({len(self.query)})')
        return self


class ScoreSample(Contract):
    """One `/v1/score` sample: the response itself, or a query that continues its prompt (OpenRLHF's shape)."""

    response: str | None = None
    query: str | None = None
    prompt: str | None = None
    label: Any = None

    @model_validator(mode="after")
    def _response_or_query(self) -> ScoreSample:
        if (self.response is None) == (self.query is None):
            raise ValueError('every sample needs "response" (the text) or "query" (prompt + response), not both')
        return self


class ScoreRequest(Contract):
    samples: list[ScoreSample]
    deadline_s: Seconds | None = None


class SlimeRequest(Contract):
    """slime's `remote_rm` body (`slime/rollout/rm_hub/__init__.py`): the prompt (text or chat messages), the
    decoded response alone and the label."""

    prompt: str | list[dict[str, Any]] | None = None
    response: str
    label: Any = None

    def prompt_text(self) -> str | None:
        """The prompt as text: a chat's last message's content."""
        if isinstance(self.prompt, list):
            content = self.prompt[-1].get("content") if self.prompt else None
            return content if isinstance(content, str) else None
        return self.prompt


class LeafResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    node: str
    score: float | None = None
    raw_score: float | int | None = None
    reason: str | None = None
    status: str
    error: str | None = None


class ScoreResult(BaseModel):
    """One sample of a `/v1/score` answer (docs/rl.md): the reward (or its substitute, or None) and why."""

    model_config = ConfigDict(extra="forbid")

    reward: float | None
    root: float | None
    status: str
    error: str | None
    substituted: str | None
    response_chars: int | None
    nodes: dict[str, float | None]
    leaves: list[LeafResult]
    weights: dict[str, float] | None = None
    weight_repairs: list[str] | None = None
    failures: list[str] | None = None
    item_id: str | None = None
    judge_model: str | None = None
    tree_hash: str | None = None
    reference: bool | None = None
    guard: dict[str, Any] | None = None  # the guard's verdict (guard/), when it looked


class ScoreAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    results: list[ScoreResult]
    substituted: int
    names: list[str]


def describe(exc: ValidationError, known: Mapping[int, Sequence[str]] | None = None, what: str = "the body") -> str:
    """Every problem of a body in one line: unknown keys (with did-you-mean among the names `known` at that depth of
    the body: 1 for its own keys, 3 for a sample's `samples.<i>.<key>`) and bad values."""
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        where, key = ".".join(loc), (loc[-1] if loc else "")
        if error["type"] == "extra_forbidden":
            names = (known or {}).get(len(loc), ())
            holder = what if len(loc) == 1 else ".".join(loc[:-1])
            parts.append(f"{holder} has an " + (unknown_name("key", key, names) if names else f"unknown key {key!r}"))
        elif key.endswith("_s"):  # a number of seconds
            parts.append(f'"{where}" must be a positive number of seconds, not {json.dumps(error["input"])[:40]}')
        else:
            parts.append(f"{where or what}: {error['msg']}".replace("Value error, ", ""))
    return "; ".join(parts)
