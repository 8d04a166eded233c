"""Groups of flags that many commands declare alike, added to a command's signature by one decorator line.

Every model-calling command takes the same six endpoint flags for the model under test, the same six for the
judge and the same four about files and the call cache (--config, --workspace, --no-cache, --replay). Their
bodies never read them as parameters: `options.model_flags()` reads the whole flag set of the running command
(handed over by `options.add_endpoint_settings`). So each group is written once here, and `flags(...)` inserts
it into the signature typer reads, at the place the command names (its --help keeps the order it always had),
and drops the group's values before calling the command. Flags the body does read (--yes, --max-cost,
--confirm-above; the item filters; --dry-run, --prices, ...) come as one object instead: `bundled(...)` puts the
group where the command declares that object, and hands the command the object built from the flags' values.
Such a group is a frozen dataclass whose fields are the flags (`group_of`): each field's annotation is the
flag's typer option and its default the flag's, so the flags and the object are written once, and a flag keeps
its parameter name (a --config file's key, click's default_map) whichever command takes it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from howtobench.cli.money import Money
from howtobench.cli.options import (
    ApiKeyEnvOpt,
    BaseUrlOpt,
    BatchExportOpt,
    BatchImportOpt,
    BatchOpt,
    BatchPollOpt,
    ConcurrencyOpt,
    ConfigOpt,
    DataOpt,
    DryRunOpt,
    GenreOpt,
    IdsOpt,
    JudgeApiKeyEnvOpt,
    JudgeBaseUrlOpt,
    JudgeConcurrencyOpt,
    JudgeModelOpt,
    JudgeRpmOpt,
    JudgeTimeoutOpt,
    LimitOpt,
    MaxFailedRateOpt,
    ModelFlags,
    ModelOpt,
    ModelsOpt,
    NoCacheOpt,
    NoProgressOpt,
    PricesOpt,
    ReplayOpt,
    RpmOpt,
    StrictOpt,
    SubsetOpt,
    SystemPromptOpt,
    TaskOpt,
    TimeoutOpt,
    TopPOpt,
    WorkspaceOpt,
    WriterMaxTokensOpt,
    WriterTemperatureOpt,
    batch_files,
    batch_settings,
)
from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, select_items
from howtobench.data.models import Item
from howtobench.llm.batch import BatchSettings
from howtobench.llm.types import SamplingParams
from howtobench.steps.batch_files import BatchFiles
from howtobench.steps.settings import Execution, Selection

Group = tuple[tuple[str, Any, Any], ...]
"""(parameter name, annotation, default) of each flag of a group, in --help order."""


def group_of(kind: type, *names: str) -> Group:
    """The flags of the dataclass `kind`: its fields' annotations are the flags' types and their defaults the
    flags' defaults. All fields in their order, or the `names` in the order given (a command that takes only some,
    or lists them in another order in its --help)."""
    hints = typing.get_type_hints(kind, include_extras=True)
    defaults = {field.name: field.default for field in dataclasses.fields(kind)}
    return tuple((name, hints[name], defaults[name]) for name in names or defaults)


def _defaulting(default: Any, **annotations: Any) -> Group:
    """A group of flags (name=annotation, in --help order) that all default to `default`."""
    return tuple((name, annotation, default) for name, annotation in annotations.items())


WRITER_ENDPOINT: Group = _defaulting(None, base_url=BaseUrlOpt, model=ModelOpt, api_key_env=ApiKeyEnvOpt,
                                     concurrency=ConcurrencyOpt, rpm=RpmOpt, timeout=TimeoutOpt)
JUDGE_ENDPOINT: Group = _defaulting(None, judge_base_url=JudgeBaseUrlOpt, judge_model=JudgeModelOpt,
                                    judge_api_key_env=JudgeApiKeyEnvOpt, judge_concurrency=JudgeConcurrencyOpt,
                                    judge_rpm=JudgeRpmOpt, judge_timeout=JudgeTimeoutOpt)
"""The endpoint flags each model-calling command declares (None: not given; `options.model_flags` reads them)."""
CALL_FILES: Group = (*_defaulting(None, config=ConfigOpt, workspace=WorkspaceOpt),
                     *_defaulting(False, no_cache=NoCacheOpt, replay=ReplayOpt))

MONEY_FLAGS: Group = group_of(Money)
"""--yes, --max-cost and --confirm-above, handed to the command as one `money.Money`."""
ASK = Money()
"""The default of a command's `money: Money` parameter (what the three flags' defaults make)."""


@dataclass(frozen=True)
class Batching:
    """How a command's model calls go out: --batch (the endpoint's batch API, polled every --batch-poll
    seconds), --batch-export / --batch-import (files for your own engine), or live (all unset)."""

    batch: BatchOpt = False
    batch_poll: BatchPollOpt = 30.0
    batch_export: BatchExportOpt = None
    batch_import: BatchImportOpt = None

    def files(self) -> BatchFiles | None:
        """The batch files (None: the calls are sent); --batch with them is an error."""
        return batch_files(self.batch_export, self.batch_import, batch=self.batch)

    def settings(self) -> BatchSettings | None:
        """The batch-API settings (None: live calls)."""
        return batch_settings(self.batch, self.batch_poll)


BATCH_FLAGS: Group = group_of(Batching)
"""--batch, --batch-poll, --batch-export and --batch-import, handed to the command as one `Batching`."""
LIVE = Batching()
"""The default of a command's `batching: Batching` parameter (what the four flags' defaults make)."""


@dataclass(frozen=True)
class Filters:
    """--data and the filters of the benchmark's items (and of the shipped writings: --models), as a command's
    flags give them; `selection()` is what the steps take."""

    data: DataOpt = None
    task: TaskOpt = None
    genre: GenreOpt = None
    models: ModelsOpt = None
    limit: LimitOpt = None
    subset: SubsetOpt = None
    ids: IdsOpt = None

    def selection(self, *, seed: int = 0, writings: Sequence[Path] | None = None, strict: bool = False) -> Selection:
        """The work these flags select (the data folder resolved: --data, else $HOWTOBENCH_DATA, else the cache)."""
        return Selection(data_dir=resolve_data_dir(self.data), tasks=_tuple(self.task), genres=_tuple(self.genre),
                         models=_tuple(self.models), limit=self.limit, subset=self.subset, ids=_tuple(self.ids),
                         seed=seed, writings=tuple(writings or ()), strict=strict)

    def items(self, seed: int = 0) -> list[Item]:
        """The benchmark items selected (`seed` draws --subset)."""
        chosen = self.selection(seed=seed)
        return select_items(load_items(chosen.data_dir, chosen.tasks), chosen.tasks, chosen.genres, chosen.limit,
                            chosen.ids, chosen.subset, chosen.seed)


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values else None


@dataclass(frozen=True)
class Control:
    """How a model-calling command runs: --strict and --max-failed-rate (when bad input rows and failed items
    stop it), --no-progress, and --dry-run / --prices (the estimate alone, and the price table every estimate and
    cost reads)."""

    strict: StrictOpt = False
    no_progress: NoProgressOpt = False
    max_failed_rate: MaxFailedRateOpt = None
    dry_run: DryRunOpt = False
    prices: PricesOpt = None

    @property
    def progress(self) -> bool:
        """Whether progress bars are drawn."""
        return not self.no_progress


def execution(flags: ModelFlags, control: Control, batching: Batching, console: Console | None,
              parallel: int | None = None) -> Execution:
    """How the command's step answers its calls, from its flags (batch status lines go to `console`; None: the
    step's own)."""
    return Execution(workspace=flags.workspace, cache_mode=flags.cache_mode, prices=control.prices,
                     batch=batching.settings(), preflight=flags.preflight, parallel=parallel,
                     progress=control.progress, max_failed_rate=control.max_failed_rate, files=batching.files(),
                     report=None if console is None else _printer(console))


def _printer(console: Console) -> Callable[[str], None]:
    return lambda line: console.print(line, highlight=False, soft_wrap=True)


RUN_CONTROL: Group = group_of(Control)
"""--strict, --no-progress, --max-failed-rate, --dry-run and --prices, handed to the command as one `Control`."""
STOP_FIRST_CONTROL: Group = group_of(Control, "strict", "max_failed_rate", "no_progress", "dry_run", "prices")
"""The same with --max-failed-rate before --no-progress (`judge`)."""
WRITING_CONTROL: Group = group_of(Control, "no_progress", "max_failed_rate", "dry_run", "prices")
"""The same without --strict (`generate`: it reads no input rows)."""
DEFAULT_CONTROL = Control()
"""The default of a command's `control: Control` parameter (what the flags' defaults make)."""


@dataclass(frozen=True)
class Sampling:
    """How the model under test writes: --temperature, --top-p, --max-tokens and --system-prompt."""

    temperature: WriterTemperatureOpt = 0.7
    top_p: TopPOpt = None
    max_tokens: WriterMaxTokensOpt = 4096
    system_prompt: SystemPromptOpt = None

    def params(self, seed: int | None) -> SamplingParams:
        """The sampling parameters sent with every writing prompt (`seed` is the command's --seed)."""
        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=seed)


WRITER_DEFAULTS = Sampling()
"""The default of a command's `sampling: Sampling` parameter (what the flags' defaults make)."""


ITEM_FILTERS: Group = group_of(Filters, "data", "task", "genre", "limit", "subset", "ids")
"""The item flags of a command that reads no shipped writings (no --models), handed over as one `Filters`."""
WRITING_FILTERS: Group = group_of(Filters)
"""The item flags with --models after --genre (`judge`), handed over as one `Filters`."""
EVERY_ITEM = Filters()
"""The default of a command's `filters: Filters` parameter (what the flags' defaults make: no filter)."""


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


def bundled(name: str, kind: type, group: Group | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Replace the command's parameter `name` by the flags of `group` (default: every field of the dataclass
    `kind`, see `group_of`), at its place, and call the command with `name=kind(**the flags' values)`."""
    every_flag = group_of(kind) if group is None else group

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        names = [p.name for p in params]
        if name not in names:
            raise TypeError(f"{command.__name__} has no parameter {name!r} to put the flags in")
        at = names.index(name)
        added = [inspect.Parameter(flag, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                 for flag, annotation, default in every_flag]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {flag: kwargs.pop(flag) for flag, _, _ in every_flag if flag in kwargs}
            return command(*args, **kwargs, **{name: kind(**values)})

        every = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in [*params[:at], *added, *params[at + 1:]]]
        wrapper.__signature__ = signature.replace(parameters=every)  # type: ignore[attr-defined]
        return wrapper

    return decorate
