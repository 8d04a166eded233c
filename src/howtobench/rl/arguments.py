"""The RL adapters' arguments as one type: what verl's `reward_kwargs`, `reward_function(...)` (TRL) and
`group_reward_function(...)` (slime) accept, by the names of `howtobench serve`'s flags (`--judge-model` is
`judge_model`).

Every endpoint setting `serve` takes is here (a provider profile, the response format, retries, re-asks, ...), so a
judge configured for the server can be configured in-process alike; a test keeps this list equal to serve's flags.
Unknown keys are refused, every bad key named at once with did-you-mean (`ConfigError`), so a misspelt
`judge_modle` in a Hydra override stops the run at its first reward instead of being ignored.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from howtobench.config import EndpointConfig, resolve_workspace
from howtobench.errors import ConfigError
from howtobench.guard.guard import GUARD_KEYS, adapter_guard
from howtobench.judges.options import judge_options, parse_judge_options, prompt_language_for, with_judge_options
from howtobench.llm.wire import provider_defaults
from howtobench.serve.contract import describe
from howtobench.serve.service import DEFAULT_DEADLINE_S, DEFAULT_MAX_QUEUED
from howtobench.serve.setup import ServeSettings

TRAINER_KEYS = frozenset({"reward_router_address", "reward_model_tokenizer"})  # verl's, for its own reward models
ENDPOINT_FIELDS = {  # our flag's name (without judge_) -> EndpointConfig's field
    "base_url": "base_urls", "model": "model", "api_key_env": "api_key_env", "concurrency": "concurrency",
    "rpm": "rpm", "timeout": "timeout_s", "max_retries": "max_retries", "reasks": "reasks",
    "response_format": "response_format", "use_max_completion_tokens": "use_max_completion_tokens",
    "json_object_schema": "json_object_schema"}


class RewardArguments(BaseModel):
    """Where rewards come from: a running server (`reward_url`) or the judge itself, in this process."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reward_url: str | None = None
    # the judge endpoint (serve's --judge-* flags)
    judge_base_url: str | list[str] | None = None
    judge_model: str | None = None
    judge_api_key_env: str | None = None
    judge_concurrency: int | None = Field(None, ge=1)
    judge_rpm: int | None = Field(None, ge=1)
    judge_timeout: float | None = Field(None, gt=0)
    judge_max_retries: int | None = Field(None, ge=0)
    judge_reasks: int | None = Field(None, ge=0)
    judge_response_format: Literal["json_schema", "json_object", "none"] | None = None
    judge_use_max_completion_tokens: bool | None = None
    judge_json_object_schema: bool | None = None
    judge_provider: str | None = None
    judge_max_tokens: int | None = Field(None, ge=1)
    # the judging and the reward rules (serve's other flags)
    workspace: str | None = None
    data: str | None = None
    method: str = "tow"
    tree: str | None = None
    no_reference: bool = False
    renormalize: bool = False
    prompt_language: str | None = None
    judge_option: list[str] | str | None = None  # --judge-option KEY=VALUE (repeatable), checked by the method
    failed_reward: float | Literal["group-mean", "none"] = "group-mean"
    deadline_s: float = Field(DEFAULT_DEADLINE_S, gt=0, allow_inf_nan=False)
    max_queued: int = Field(DEFAULT_MAX_QUEUED, ge=1)
    max_pending: int | None = Field(None, ge=1)  # the old name of max_queued
    group_size: int | None = Field(None, ge=1)
    # the guard (serve's --guard* flags; guard/)
    guard: Literal["off", "flag", "skip"] | None = None
    guard_reward: float | str | None = None
    guard_thresholds: list[str] | None = None
    guard_cliches: str | None = None

    @field_validator("failed_reward")
    @classmethod
    def _finite(cls, value: float | str) -> float | str:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("the substitute must be a finite number")
        return value

    @classmethod
    def of(cls, kwargs: dict[str, Any]) -> RewardArguments:
        """The arguments a trainer passed (its own keys left out); `ConfigError` naming every bad key at once."""
        given = {k: v for k, v in kwargs.items() if k not in TRAINER_KEYS and v is not None}
        try:
            return cls.model_validate(given)
        except ValidationError as exc:
            raise ConfigError("howtobench reward: " + describe(exc, {1: tuple(cls.model_fields)}, "the arguments")
                              ) from None

    def endpoint(self) -> EndpointConfig:
        """The judge's endpoint: a provider profile's defaults under every setting given."""
        given = {field: getattr(self, "judge_" + flag) for flag, field in ENDPOINT_FIELDS.items()}
        profile = provider_defaults(self.judge_provider, self.judge_model) if self.judge_provider else {}
        try:
            return EndpointConfig.model_validate({**profile, **{k: v for k, v in given.items() if v is not None}})
        except ValidationError as exc:
            raise ConfigError(f"howtobench reward: the judge endpoint: {describe(exc, what='the endpoint')}") from None

    def settings(self) -> ServeSettings:
        """The in-process service's settings (those `howtobench serve` builds from the same flags)."""
        if not self.judge_model or not (self.judge_base_url or self.judge_provider):
            raise ConfigError("howtobench reward: give reward_url (a running `howtobench serve`) or judge_base_url "
                              "and judge_model (or judge_provider and judge_model) to judge in this process")
        options = with_judge_options(self.method, judge_options(
            renormalize=self.renormalize, tree=self.tree, max_tokens=self.judge_max_tokens,
            prompt_language=prompt_language_for(self.method, self.prompt_language)),
            parse_judge_options(self.judge_option))
        return ServeSettings(
            endpoint=self.endpoint(), workspace=resolve_workspace(self.workspace),
            data_dir=Path(self.data) if self.data else None, method=self.method, options=options,
            no_reference=self.no_reference, failed_reward=None if self.failed_reward == "none" else self.failed_reward,
            deadline_s=self.deadline_s, max_queued=self.max_pending or self.max_queued, group_size=self.group_size,
            run_id="rl", guard=adapter_guard({k: v for k in GUARD_KEYS if (v := getattr(self, k)) is not None}))

    def key(self) -> tuple[Any, ...]:
        """One scorer per distinct arguments in a process."""
        return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(self.model_dump().items()))
