"""Groups of flags that many commands declare alike, added to a command's signature by one decorator line.

Every model-calling command takes the same six endpoint flags for the model under test, the same six for the
judge and the same four about files and the call cache (--config, --workspace, --no-cache, --replay). Their
bodies never read them as parameters: `options.model_flags()` reads the whole flag set of the running command
(handed over by `options.add_endpoint_settings`). So each group is written once here, and `flags(...)` inserts
it into the signature typer reads, at the place the command names (its --help keeps the order it always had),
and drops the group's values before calling the command. Flags the body does read (--yes, --max-cost,
--confirm-above) come as one object instead: `bundled(...)` puts the group where the command declares that
object, and hands the command the object built from the flags' values.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.cli.money import DEFAULT_CONFIRM_ABOVE, ConfirmAboveOpt, MaxCostOpt, Money, YesOpt
from howtobench.cli.options import (
    ApiKeyEnvOpt,
    BaseUrlOpt,
    BatchExportOpt,
    BatchImportOpt,
    BatchOpt,
    BatchPollOpt,
    ConcurrencyOpt,
    ConfigOpt,
    JudgeApiKeyEnvOpt,
    JudgeBaseUrlOpt,
    JudgeConcurrencyOpt,
    JudgeModelOpt,
    JudgeRpmOpt,
    JudgeTimeoutOpt,
    ModelOpt,
    NoCacheOpt,
    ReplayOpt,
    RpmOpt,
    TimeoutOpt,
    WorkspaceOpt,
    batch_files,
    batch_settings,
)
from howtobench.llm.batch import BatchSettings
from howtobench.steps.batch_files import BatchFiles

Group = tuple[tuple[str, Any, Any], ...]
"""(parameter name, annotation, default) of each flag of a group, in --help order."""

WRITER_ENDPOINT: Group = (
    ("base_url", BaseUrlOpt, None),
    ("model", ModelOpt, None),
    ("api_key_env", ApiKeyEnvOpt, None),
    ("concurrency", ConcurrencyOpt, None),
    ("rpm", RpmOpt, None),
    ("timeout", TimeoutOpt, None),
)
JUDGE_ENDPOINT: Group = (
    ("judge_base_url", JudgeBaseUrlOpt, None),
    ("judge_model", JudgeModelOpt, None),
    ("judge_api_key_env", JudgeApiKeyEnvOpt, None),
    ("judge_concurrency", JudgeConcurrencyOpt, None),
    ("judge_rpm", JudgeRpmOpt, None),
    ("judge_timeout", JudgeTimeoutOpt, None),
)
CALL_FILES: Group = (
    ("config", ConfigOpt, None),
    ("workspace", WorkspaceOpt, None),
    ("no_cache", NoCacheOpt, False),
    ("replay", ReplayOpt, False),
)

MONEY_FLAGS: Group = (
    ("yes", YesOpt, False),
    ("max_cost", MaxCostOpt, None),
    ("confirm_above", ConfirmAboveOpt, DEFAULT_CONFIRM_ABOVE),
)
"""--yes, --max-cost and --confirm-above, handed to the command as one `money.Money`."""
ASK = Money()
"""The default of a command's `money: Money` parameter (what the three flags' defaults make)."""



@dataclass(frozen=True)
class Batching:
    """How a command's model calls go out: --batch (the endpoint's batch API, polled every --batch-poll
    seconds), --batch-export / --batch-import (files for your own engine), or live (all unset)."""

    batch: bool = False
    batch_poll: float = 30.0
    batch_export: Path | None = None
    batch_import: list[Path] | None = None

    def files(self) -> BatchFiles | None:
        """The batch files (None: the calls are sent); --batch with them is an error."""
        return batch_files(self.batch_export, self.batch_import, batch=self.batch)

    def settings(self) -> BatchSettings | None:
        """The batch-API settings (None: live calls)."""
        return batch_settings(self.batch, self.batch_poll)


BATCH_FLAGS: Group = (
    ("batch", BatchOpt, False),
    ("batch_poll", BatchPollOpt, 30.0),
    ("batch_export", BatchExportOpt, None),
    ("batch_import", BatchImportOpt, None),
)
"""--batch, --batch-poll, --batch-export and --batch-import, handed to the command as one `Batching`."""
LIVE = Batching()
"""The default of a command's `batching: Batching` parameter (what the four flags' defaults make)."""


def flags(*groups: Group, after: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add `groups` to the command's signature right after its parameter `after`.

    Decorators stack: an outer one may name a parameter an inner one added. The command must not declare a
    group's parameter itself (that would be two flags of one name)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        names = [p.name for p in params]
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                 for group in groups for name, annotation, default in group]
        clash = {p.name for p in added} & set(names)
        if clash:
            raise TypeError(f"{command.__name__} declares {sorted(clash)} itself and through flags()")
        if after not in names:
            raise TypeError(f"{command.__name__} has no parameter {after!r} to put the flags after")
        at = names.index(after) + 1
        dropped = {p.name for p in added}

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return command(*args, **{k: v for k, v in kwargs.items() if k not in dropped})

        # typer passes every flag by name, so all may be keyword-only (which lets a flag with a default stand
        # before an argument without one, as in the command's own list)
        every = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in [*params[:at], *added, *params[at:]]]
        wrapper.__signature__ = signature.replace(parameters=every)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def bundled(name: str, kind: Callable[..., Any], group: Group) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Replace the command's parameter `name` by the flags of `group`, at its place, and call the command with
    `name=kind(**the flags' values)` (the group's names are `kind`'s fields)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        names = [p.name for p in params]
        if name not in names:
            raise TypeError(f"{command.__name__} has no parameter {name!r} to put the flags in")
        at = names.index(name)
        added = [inspect.Parameter(flag, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                 for flag, annotation, default in group]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {flag: kwargs.pop(flag) for flag, _, _ in group if flag in kwargs}
            return command(*args, **kwargs, **{name: kind(**values)})

        every = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in [*params[:at], *added, *params[at + 1:]]]
        wrapper.__signature__ = signature.replace(parameters=every)  # type: ignore[attr-defined]
        return wrapper

    return decorate
