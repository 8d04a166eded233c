"""Option types shared by every command, so the same flag means the same thing everywhere."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from howtobench.cli.config_file import apply_config, flatten
from howtobench.cli.help_groups import FILES, JUDGE, MONEY, SELECTION, WRITER
from howtobench.config import (
    MAX_TIMEOUT_S,
    RESPONSE_FORMATS,
    EndpointConfig,
    api_key_env_problem,
    load_config_file,
    resolve_workspace,
)
from howtobench.errors import ConfigError
from howtobench.event_loop import run as run_async
from howtobench.judges.base import EmptyConvention
from howtobench.llm.batch import BatchSettings
from howtobench.llm.client import CacheMode
from howtobench.llm.wire import PROVIDERS, provider_defaults
from howtobench.redact import redact_text, remember_secret
from howtobench.report import formats
from howtobench.steps.batch_files import FILE_BASE_URL, BatchFiles, RoundExported
from howtobench.steps.shards import Shard
from howtobench.suggest import unknown_name

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", rich_help_panel=SELECTION,
        help="Benchmark root (holds completion/, guide/, open/). "
        "Default: $HOWTOBENCH_DATA, else the per-user cache filled by `howtobench data download`.",
    ),
]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace", rich_help_panel=FILES,
        help="Folder for the call cache (SQLite) and logs. Default: $HOWTOBENCH_WORKSPACE, else ./.howtobench.",
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", rich_help_panel=FILES, is_eager=True, callback=apply_config,
                 help="YAML file of option defaults: keys are this command's options with underscores (judge_model: "
                 "gpt-4o), optionally in writer: / judge: sections (judge: {model: gpt-4o, base_url: ...}); an "
                 "unknown key is an error. Flags override it. A run's own runs/<name>/config.yaml repeats that run."),
]
StrictOpt = Annotated[
    bool,
    typer.Option("--strict", rich_help_panel=FILES,
                 help="Stop at the first bad input row instead of skipping and counting bad rows."),
]


# ------------------------------------------------------------------ names checked when the command line is read
# Each callback runs while click parses the arguments, so a typo stops the command before any data is loaded or
# any model is started, with a did-you-mean.


def checked(what: str, known: Callable[[], Sequence[str]]) -> Callable[[Any], Any]:
    """The callback of a flag (or argument) naming one of `known()` (or a list of them): a name it does not know
    stops the command with a did-you-mean."""
    def check(value: Any) -> Any:
        names = known()
        for name in [value] if isinstance(value, str) else value or []:
            if name not in names:
                raise typer.BadParameter(unknown_name(what, name, names))
        return value

    return check


def split_list(values: Sequence[str] | None, flag: str) -> list[str] | None:
    """A list flag's values, given as commas (`--genre poem,prose`), repeats (`--genre poem --genre prose`) or
    both: every form means the same. Mixing them works, with a hint that either form alone would do."""
    if not values:
        return None
    parts = [part.strip() for value in values for part in value.split(",")]
    if len(values) > 1 and any("," in value for value in values):
        typer.echo(f"hint: {flag} takes a list as commas ({flag} a,b) or repeats ({flag} a {flag} b); both were "
                   f"given, and all {len([p for p in parts if p])} values are used", err=True)
    return [part for part in parts if part]


def _listed(what: str, known: Callable[[], Sequence[str]] | None = None,
            alias: Callable[[str], str] = lambda name: name) -> Callable[[typer.CallbackParam, Any], Any]:
    """The callback of a list flag: commas and repeats alike (`split_list`), each name through `alias` (a genre's
    Chinese label to its id), then checked against `known` with a did-you-mean."""
    def check(param: typer.CallbackParam, value: Any) -> Any:
        flag = max(param.opts or [f"--{what}"], key=len)
        names = [alias(name) for name in split_list(value, flag) or []]
        if known is not None:
            for name in names:
                if name not in known():
                    raise typer.BadParameter(unknown_name(what, name, known()))
        return names or None

    return check


def _genre_id(name: str) -> str:
    """A genre by its id or by its Chinese label (`书信` -> letters)."""
    from howtobench.data.genres import genre_id

    return genre_id(name) or name


def _tasks() -> Sequence[str]:
    from howtobench.data.models import TASKS

    return TASKS


def _genres() -> Sequence[str]:
    from howtobench.data.genres import GENRES

    return list(GENRES)


def judge_methods() -> Sequence[str]:
    """The registered judge methods (importing the judge modules fills the registry)."""
    from howtobench.judges.base import METHODS, import_judges

    import_judges()
    return sorted(METHODS)


_known_method = checked("judge method", judge_methods)


def check_method(value: Any) -> Any:
    """The --method callback: a registered name, in any case (`ToW`, as the paper spells it, is `tow`); another name
    stops with a did-you-mean."""
    if isinstance(value, str) and value.lower() in judge_methods():
        return value.lower()
    return _known_method(value)
check_task = _listed("task", _tasks)
TaskOpt = Annotated[
    list[str] | None,
    typer.Option("--task", rich_help_panel=SELECTION, callback=_listed("task", _tasks),
                 help="Only these tasks (completion, guide, open): commas or repeats (--task guide,open)."),
]
GenreOpt = Annotated[
    list[str] | None,
    typer.Option("--genre", rich_help_panel=SELECTION, callback=_listed("genre", _genres, _genre_id),
                 help="Only these genres, by id or Chinese label (fiction or 小说, letters or 书信: `howtobench list "
                 "genres`): commas or repeats."),
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", rich_help_panel=SELECTION,
                 min=1, help="At most this many items per task, the first ones in file order (they cover "
                 "few genres: for a representative sample use --subset). Not --samples, the self-consistency count."),
]
SubsetOpt = Annotated[
    int | None,
    typer.Option("--subset", rich_help_panel=SELECTION,
                 min=1, help="A seeded sample of N items stratified by task x genre (--seed picks it): "
                 "the first 12 cover all 12 genres, more follow the benchmark's mix. Instead of --limit."),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        callback=checked("format", formats.names),  # one vocabulary for every command: report.formats
        help=f"How results are printed: {formats.help_text()}.",
    ),
]

EMPTY_HELP = (
    "How empty writings count. exclude (default, the authors' convention: their pipeline writes no judgment for an "
    "empty writing, so the paper's tables never saw one): left out of every mean, correlation and score change. "
    "lowest: the lowest score the judge recorded for them. Their number is always shown."
)
EmptyOpt = Annotated[EmptyConvention, typer.Option("--empty", help=EMPTY_HELP)]


# ------------------------------------------------------------------ endpoints (the model under test and the judge)
# Every command that calls a model takes the same flags. Each may also be set in the --config file under the
# same name with underscores (base_url, model, judge_model, judge_concurrency, ...); a flag overrides the file.
# With neither a base URL nor a model configured, commands use the embedded local model.

_ENDPOINT_HELP = {
    "base-url": "OpenAI-compatible base URL of {whom} (e.g. http://localhost:8000/v1); repeat it for several "
                "servers of the same model.",
    "model": "Model name of {whom}, as its server knows it.",
    "api-key-env": "Environment variable holding the API key of {whom} (never the key itself); omit for servers "
                   "without a key.",
    "concurrency": "Requests in flight at once per base URL of {whom}: auto (the default) finds the number while "
                   "running, backing off on 429/503/timeouts and growing latency; auto:N the same, at most N "
                   "(default 1024); N fixes it.",
    "rpm": "At most this many requests per minute to {whom} (default: no limit).",
    "timeout": "Seconds one HTTP attempt to {whom} may take before it is retried (default 300).",
}
_LIMITS: dict[str, dict[str, Any]] = {"concurrency": {"metavar": "auto|auto:N|N"}, "rpm": {"min": 1},
                                      "timeout": {"min": 0.001, "max": MAX_TIMEOUT_S}}


def _endpoint_option(judge: bool, name: str) -> Any:
    """The flag `name` of an endpoint: the model under test's (--NAME) or the judge's (--judge-NAME) are the same
    option with the same limits, each explained for its endpoint and shown in its own --help section."""
    flag, panel, whom = (f"--judge-{name}", JUDGE, "the judge") if judge else (f"--{name}", WRITER,
                                                                                 "the model under test")
    return typer.Option(flag, rich_help_panel=panel, help=_ENDPOINT_HELP[name].format(whom=whom),
                        **_LIMITS.get(name, {}))


BaseUrlOpt = Annotated[list[str] | None, _endpoint_option(False, "base-url")]
JudgeBaseUrlOpt = Annotated[list[str] | None, _endpoint_option(True, "base-url")]
ModelOpt = Annotated[str | None, _endpoint_option(False, "model")]
JudgeModelOpt = Annotated[str | None, _endpoint_option(True, "model")]
ApiKeyEnvOpt = Annotated[str | None, _endpoint_option(False, "api-key-env")]
JudgeApiKeyEnvOpt = Annotated[str | None, _endpoint_option(True, "api-key-env")]
ConcurrencyOpt = Annotated[str | None, _endpoint_option(False, "concurrency")]
JudgeConcurrencyOpt = Annotated[str | None, _endpoint_option(True, "concurrency")]
RpmOpt = Annotated[int | None, _endpoint_option(False, "rpm")]
JudgeRpmOpt = Annotated[int | None, _endpoint_option(True, "rpm")]
TimeoutOpt = Annotated[float | None, _endpoint_option(False, "timeout")]
JudgeTimeoutOpt = Annotated[float | None, _endpoint_option(True, "timeout")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", rich_help_panel=FILES, help="Call the model even when the "
                                           "workspace cache holds the answer (calls are still logged).")]
ReplayOpt = Annotated[
    bool,
    typer.Option("--replay", rich_help_panel=FILES,
                 help="Read-only replay: answer every call from the workspace cache and stop with an "
                 "error at the first call that is not cached. Give the same endpoint flags as the run that filled "
                 "the cache (its model names are part of every cache key); no key is read and nothing is sent."),
]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", rich_help_panel=MONEY, help="Estimate calls, tokens and cost "
                                         "(from the price table) and exit without calling any model.")]
PricesOpt = Annotated[
    Path | None,
    typer.Option("--prices", rich_help_panel=MONEY,
                 help="YAML price table (USD per million input / cached_input / output tokens per "
                 "model) added to the built-in one."),
]

MaxFailedRateOpt = Annotated[
    float | None,
    typer.Option("--max-failed-rate", rich_help_panel=FILES, min=0.0, max=1.0,
                 help="Stop early (exit status 4) once more than this share of the items finished so far failed, "
                 "e.g. 0.2; 0 stops at the first failure. The share is taken over at least the first 10 items (all "
                 "of them when fewer are selected). What finished is saved and re-running resumes."),
]
IdsOpt = Annotated[list[str] | None, typer.Option("--ids", rich_help_panel=SELECTION, callback=_listed("id"),
                                                  help="Only these item ids (infer_id): commas or repeats.")]
ModelsOpt = Annotated[list[str] | None, typer.Option("--models", rich_help_panel=SELECTION, callback=_listed("model"),
                      help="Only the writings of these shipped models (release file names such as gpt-4o-2024-11-20; "
                      "`howtobench list models`): commas or repeats.")]
LocalJudgeOpt = Annotated[
    bool,
    typer.Option("--local-judge", rich_help_panel=JUDGE,
                 help="Let the embedded local model (Gemma-3-270M) judge: a check of the pipeline, "
                 "not a result (its scores mean nothing, and on a CPU a full benchmark takes hours). Without a judge "
                 "endpoint (--judge-base-url / --judge-model) a command that judges with a model stops unless this "
                 "is given; the offline smoke run (`howtobench run` with no endpoint at all) needs nothing."),
]


def no_judge(what: str) -> str:
    """The one line a judging command stops with when no judge is configured (exit 2)."""
    from howtobench.judges.base import METHODS, import_judges

    import_judges()  # the metrics that need nothing: no model, and no stored judgments to re-aggregate
    metrics = "|".join(sorted(m.name for m in METHODS.values() if not m.calls_model and m.rejudges is None))
    return (f"{what}: give the judge with --judge-base-url URL --judge-model NAME (its key with "
            f"--judge-api-key-env VAR), a metric that calls no model with --method {metrics}, or --local-judge to let "
            "the embedded 270M model judge (a smoke test whose scores mean nothing)")


def check_judge(judge: EndpointConfig | None, method: str, local_judge: bool, what: str) -> None:
    """Stop before anything loads when the embedded model would judge in place of a judge the user forgot: the
    270M model judging a real selection takes hours and says nothing. `--local-judge` asks for it."""
    from howtobench.judges.base import calls_a_model

    if local_judge and judge is not None:
        raise ConfigError("--local-judge and --judge-base-url/--judge-model contradict each other: give one")
    if judge is None and calls_a_model(method) and not local_judge:
        raise ConfigError(no_judge(what))


NoProgressOpt = Annotated[bool, typer.Option("--no-progress", rich_help_panel=FILES, help="Do not draw progress bars.")]
JudgeMaxTokensOpt = Annotated[
    int | None,
    typer.Option("--judge-max-tokens", rich_help_panel=JUDGE,
                 min=16, help="Max tokens of each judge reply (default: the method's own)."),
]
ReferenceFromOpt = Annotated[str | None, typer.Option("--reference-from", help="Appendix B.3: a shipped model's "
                             "writings (e.g. deepseek-chat) or a writings file (infer_id, model, output) as the "
                             "6-point reference in place of the human one; the instructions stay. Each judgment "
                             "records its reference_source; a writing judged against itself, or of an item the "
                             "source has no writing for, is skipped and counted.")]
PromptLanguageOpt = Annotated[
    str | None,
    typer.Option("--prompt-language", rich_help_panel=SELECTION,
                 help="Language of the judge's prompts (ToW leaves, weights, baselines): en "
                 "(default; the authors' judge prompts are English for the Chinese benchmark) or zh (our Chinese "
                 "templates, the same criteria and bands). Recorded on every judgment; each has its own prompt "
                 "hash and cached calls."),
]
ParallelOpt = Annotated[
    int | None,
    typer.Option("--parallel", rich_help_panel=JUDGE,
                 min=1, help="Writings judged at once. Default: twice the judge's capacity "
                 "(2 x --judge-concurrency x its base URLs; with auto, 2 x its cap), so every judge slot stays "
                 "busy while half the writings build prompts or save results; the judge's slots bound the calls "
                 "either way."),
]
WriterTemperatureOpt = Annotated[
    float, typer.Option("--temperature", rich_help_panel=WRITER,
                        min=0.0, help="Sampling temperature of the model under test.")
]
WriterMaxTokensOpt = Annotated[int, typer.Option("--max-tokens", rich_help_panel=WRITER,
                                                 min=1, help="Longest writing, in tokens.")]
TopPOpt = Annotated[float | None, typer.Option("--top-p", min=0.0, max=1.0, help="Nucleus sampling (default: server).")]
SystemPromptOpt = Annotated[
    str | None, typer.Option("--system-prompt", rich_help_panel=WRITER,
                             help="A system message sent before every writing prompt (recorded).")
]

# The endpoint flags' parameter names (judge flags carry the prefix judge_): the ones each command declares, then
# the server-quirk settings that `add_endpoint_settings` adds to every command that declares the first ones.
_DECLARED = ("base_url", "model", "api_key_env", "concurrency", "rpm", "timeout")
_SETTINGS = ("max_retries", "reasks", "response_format", "use_max_completion_tokens", "json_object_schema")
_PROFILE = "provider"  # a named server's defaults (llm.wire.PROVIDERS), resolved into the settings above
_ENDPOINT_FLAGS = (*_DECLARED, *_SETTINGS, _PROFILE)
_GIVEN: ContextVar[Mapping[str, Any] | None] = ContextVar("model_command_flags", default=None)
"""The running model-calling command's flags, by parameter name (set by `add_endpoint_settings`' wrapper)."""


def _setting_options(prefix: str) -> dict[str, Any]:
    """The Annotated types of the server-quirk flags, for the model under test ("") or the judge ("judge_")."""
    flag, who = f"--{prefix.replace('_', '-')}", "the judge" if prefix else "the model under test"
    panel = JUDGE if prefix else WRITER
    return {
        "max_retries": Annotated[int | None, typer.Option(f"{flag}max-retries", rich_help_panel=panel,
                                                          min=0, help=f"HTTP retries per "
                                 f"call to {who} on 429 / 5xx / timeouts, with backoff (default 6).")],
        "reasks": Annotated[int | None, typer.Option(f"{flag}reasks", rich_help_panel=panel,
                                                     min=0, help=f"Times {who} is asked again "
                            "when its reply does not match the JSON schema (default 2).")],
        "response_format": Annotated[str | None, typer.Option(f"{flag}response-format", rich_help_panel=panel,
                                                              callback=checked(
                                     "response format", lambda: RESPONSE_FORMATS), help=f"How {who} is asked "
                                     "for JSON: json_schema (OpenAI, vLLM, SGLang, llama.cpp; default), json_object "
                                     "(DeepSeek, Ollama: the schema goes into the prompt) or none.")],
        "use_max_completion_tokens": Annotated[bool | None, typer.Option(
            f"{flag}use-max-completion-tokens", rich_help_panel=panel,
                help=f"Send the reply budget of {who} as max_completion_tokens "
            "(OpenAI o-series and newer models reject max_tokens).")],
        "json_object_schema": Annotated[bool | None, typer.Option(
            f"{flag}json-object-schema", rich_help_panel=panel,
                help="With json_object, also send the schema inside response_format "
            "(llama-cpp-python's server constrains decoding by it).")],
        _PROFILE: Annotated[str | None, typer.Option(
            f"{flag}provider", rich_help_panel=panel, callback=checked("provider", lambda: list(PROVIDERS)),
            help=f"Defaults of a named server: {', '.join(PROVIDERS)} (docs/providers.md).")],
    }


NoPreflightOpt = Annotated[
    bool | None,
    typer.Option("--no-preflight", rich_help_panel=FILES,
                 help="Skip the preflight: one tiny request per endpoint before the first item, "
                 "which stops a wrong key, model name or URL with one line before anything is spent (never made "
                 "for --replay or --dry-run)."),
]


def add_endpoint_settings(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command that declares --base-url (or --judge-base-url) every other endpoint setting as a flag too.

    Each EndpointConfig field a config file can hold is then a flag as well, without repeating ten parameters
    in every model-calling command: the flags are added to the signature typer reads, and the command's whole
    flag set reaches `model_flags()` through a context variable while the command runs (the command itself
    never passes its flags on).
    """
    signature = inspect.signature(command, eval_str=True)
    prefixes = [p for p in ("", "judge_") if f"{p}base_url" in signature.parameters]
    extra = [
        inspect.Parameter(prefix + name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
        for prefix in prefixes for name, annotation in _setting_options(prefix).items()
        if prefix + name not in signature.parameters
    ]
    if prefixes and "no_preflight" not in signature.parameters:
        extra.append(inspect.Parameter("no_preflight", inspect.Parameter.KEYWORD_ONLY, default=None,
                                       annotation=NoPreflightOpt))
    if not prefixes:
        return command
    names = {p.name for p in extra}

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        added = {name: kwargs.pop(name) for name in names if name in kwargs}
        token = _GIVEN.set({**kwargs, **added})
        try:
            return command(*args, **kwargs)
        finally:
            _GIVEN.reset(token)

    params = list(signature.parameters.values())
    wrapper.__signature__ = signature.replace(parameters=[*params, *extra])  # type: ignore[attr-defined]
    return wrapper


def cache_mode(no_cache: bool, replay: bool) -> CacheMode:
    """The client's cache mode from --no-cache / --replay ("on", "off", "replay")."""
    if no_cache and replay:
        raise typer.BadParameter("--no-cache and --replay contradict each other; give one")
    return "off" if no_cache else "replay" if replay else "on"


def endpoint_from_flags(prefix: str, flags: dict[str, Any], config: dict[str, Any]) -> EndpointConfig | None:
    """An EndpointConfig from flags (None = not given) over config-file keys `<prefix><name>`.

    `flags` uses the names of `_ENDPOINT_FLAGS` (base_url, model, ..., reasks, response_format, ...). A `provider`
    (`llm.wire.PROVIDERS`) gives the defaults, under every setting given. Returns None when neither a base URL, a
    model nor a provider is configured (callers then use the embedded local model).
    """
    unknown = set(flags) - set(_ENDPOINT_FLAGS)
    if unknown:
        raise TypeError(f"unknown endpoint flags {sorted(unknown)}; known: {', '.join(_ENDPOINT_FLAGS)}")
    def pick(name: str) -> Any:
        value = flags.get(name)
        return value if value not in (None, []) else config.get(prefix + name)

    model, provider = pick("model"), pick(_PROFILE)
    profile = provider_defaults(str(provider), model) if provider else {}
    base_url = pick("base_url") or profile.get("base_urls")
    if not model and not (pick("base_url") or provider):
        return None
    flag = f"--{prefix.replace('_', '-')}"
    if provider and not model:
        raise ConfigError(f"{flag}provider {provider} needs {flag}model: the profile names no model")
    if not base_url or not model:
        missing = "base-url" if not base_url else "model"
        raise ConfigError(f"{flag}{missing} is missing: give both {flag}base-url and {flag}model")
    key_env = pick("api_key_env")
    if key_env is not None and (problem := api_key_env_problem(str(key_env))) is not None:
        remember_secret(str(key_env))
        raise ConfigError(f"{flag}api-key-env {problem}")
    fields: dict[str, Any] = {
        "model": model,
        "base_urls": tuple([base_url] if isinstance(base_url, str) else base_url),
        "api_key_env": key_env,
        "concurrency": pick("concurrency"),
        "rpm": pick("rpm"),
        "timeout_s": pick("timeout"),
        **{name: pick(name) for name in _SETTINGS},
    }
    try:
        return EndpointConfig(**{**profile, **{k: v for k, v in fields.items() if v is not None}})
    except ValidationError as exc:
        raise ConfigError(f"bad {prefix or 'model'} endpoint settings: {redact_text(str(exc))}") from None


def writer_endpoint(config: dict[str, Any], **flags: Any) -> EndpointConfig | None:
    """The model under test (flags --base-url, --model, ... given by their `_ENDPOINT_FLAGS` names), or None."""
    return endpoint_from_flags("", flags, config)


def judge_endpoint(config: dict[str, Any], **flags: Any) -> EndpointConfig | None:
    """The judge (flags --judge-base-url, --judge-model, ... given without the judge_ prefix), or None."""
    return endpoint_from_flags("judge_", flags, config)


# ------------------------------------------------------------------ reading the whole flag set at once


@dataclass(frozen=True)
class ModelFlags:
    """What a model-calling command's flags resolve to. An endpoint is None when not configured: the command
    then falls back to the embedded local model (see `howtobench.steps.client`)."""

    writer: EndpointConfig | None
    judge: EndpointConfig | None
    workspace: Path
    cache_mode: CacheMode
    preflight: bool = True


def model_flags(params: Mapping[str, Any] | None = None, *, files: BatchFiles | None = None) -> ModelFlags:
    """Resolve the shared flags (--config, --workspace, --no-cache, --replay and the endpoint flags) of the running
    command, as `add_endpoint_settings` handed them over (or of `params`, by parameter name).

    The parameter names (base_url, judge_model, ...) are the same in every command, so reading them by name keeps
    each command from re-listing all twelve. The writer is read only by commands that declare --base-url, the
    judge only by those that declare --judge-base-url (so a config file's unrelated keys cannot break them).
    With batch `files`, a model named without a base URL gets one that is never contacted.
    """
    given = dict(params if params is not None else _GIVEN.get() or {})
    if params is None and not given:
        raise RuntimeError("model_flags() outside a model-calling command: its flags were never handed over")
    if files is not None:
        given = file_endpoint_params(file_endpoint_params(given, "", files), "judge_", files)
    config_path = given.get("config")
    config = flatten(load_config_file(config_path), str(config_path)) if config_path else {}

    def endpoint(prefix: str) -> EndpointConfig | None:
        if prefix + "base_url" not in given:
            return None
        return endpoint_from_flags(prefix, {n: given.get(prefix + n) for n in _ENDPOINT_FLAGS}, config)

    return ModelFlags(
        writer=endpoint(""),
        judge=endpoint("judge_"),
        workspace=resolve_workspace(given.get("workspace")),
        cache_mode=cache_mode(bool(given.get("no_cache")), bool(given.get("replay"))),
        preflight=not given.get("no_preflight"),
    )


def given_flags() -> dict[str, Any]:
    """The running model-calling command's flags by parameter name, as given on the command line or read from
    --config: for a command whose settings are built by a table of its options (`run_settings.RUN_OPTIONS`)."""
    given = _GIVEN.get()
    if given is None:
        raise RuntimeError("given_flags() outside a model-calling command: its flags were never handed over")
    return dict(given)


def run_preflight(flags: ModelFlags, **endpoints: EndpointConfig | None) -> None:
    """`llm.preflight.preflight_endpoints` of `endpoints` (role=endpoint) under the command's flags, for commands
    whose work runs in their own event loop (build, perturb); the others pass `flags.preflight` to their library
    function, which checks after taking the output's lock."""
    from howtobench.llm.preflight import preflight_endpoints

    run_async(preflight_endpoints(endpoints, enabled=flags.preflight, cache_mode=flags.cache_mode,
                                    workspace=flags.workspace))


def preflight_plan(flags: ModelFlags, calls: Mapping[str, EndpointConfig | None], *, batch: bool = False
                   ) -> dict[str, EndpointConfig | None]:
    """The endpoints the command's preflight will check, for its estimate: those it calls a model on (`calls`,
    role -> endpoint, as `steps.spending.spends_money` reads them); none with --no-preflight, --replay or --batch."""
    if not flags.preflight or flags.cache_mode == "replay" or batch:
        return {}
    return dict(calls)


BatchOpt = Annotated[bool, typer.Option("--batch", rich_help_panel=MONEY, help="Send the model calls through the "
                                        "endpoint's batch API (/files and /batches, as OpenAI's: half the price, "
                                        "answered within 24 h; re-asks and retries follow in later batches). Each "
                                        "batch id is kept in the workspace, so a killed run picks its batch up again "
                                        "instead of paying twice (docs/batch.md).")]
BatchPollOpt = Annotated[float, typer.Option(
    "--batch-poll", rich_help_panel=MONEY, min=0.01, help="Seconds between status checks of a running batch.")]


BatchExportOpt = Annotated[Path | None, typer.Option(
    "--batch-export", help="Send nothing: write the model calls the job still needs to FILE as OpenAI Batch input "
    "JSONL (custom_id, method, url, body; the body's model is --judge-model / --model) for `vllm run-batch`, Ray "
    "Data or OpenAI's batch API, and print how many, their estimated cost and the commands. No preflight; no base "
    "URL needed. See docs/cluster.md.")]
BatchImportOpt = Annotated[list[Path] | None, typer.Option(
    "--batch-import", help="Fold an engine's batch output JSONL (OpenAI's or `vllm run-batch`'s format) into the "
    "job: checked against what it exported, answers stored in the call cache as if called live; the job goes as "
    "far as they take it and exports the next round (re-asks of invalid replies) when one is needed. Repeatable; "
    "importing a file twice changes nothing.")]


ShardOpt = Annotated[str | None, typer.Option(
    "--shard", help="I/N: do part I of N of the job (its items split deterministically: item k to part k mod N + "
    "1), into its own --out, beside which <out>.shard.json records the part; `howtobench merge` joins the N parts "
    "into one output. For N machines or a Slurm array (--shard $SLURM_ARRAY_TASK_ID/N). See docs/cluster.md.")]


def shard_of(text: str | None) -> Shard | None:
    """The shard of --shard I/N (None: the whole job)."""
    return None if text is None else Shard.parse(text)


def batch_files(export: Path | None, imports: list[Path] | None, *, batch: bool = False) -> BatchFiles | None:
    """The batch-file settings of --batch-export / --batch-import (None: the calls are sent)."""
    if export is None and not imports:
        return None
    if batch:
        raise typer.BadParameter("--batch sends the calls to the endpoint's batch API; --batch-export / "
                                 "--batch-import leave them to your engine: choose one")
    return BatchFiles(export=export, imports=tuple(imports or ()))


@contextlib.contextmanager
def batch_rounds(console: Console) -> Iterator[None]:
    """A command stopped because its next calls went into a batch file: print what and how to answer them, exit 0."""
    try:
        yield
    except RoundExported as exc:
        console.print(str(exc), highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(0) from None


def file_endpoint_params(params: Mapping[str, Any], prefix: str, files: BatchFiles | None) -> dict[str, Any]:
    """A command's parameters with a base URL that is never contacted when batch files answer its calls and only
    the model was named (a batch file needs the model's name, not a server)."""
    out = dict(params)
    if files is not None and out.get(prefix + "model") and not out.get(prefix + "base_url"):
        out[prefix + "base_url"] = [FILE_BASE_URL]
    return out


def batch_settings(batch: bool, poll_s: float) -> BatchSettings | None:
    """The batch settings of --batch / --batch-poll (None: live calls)."""
    return BatchSettings(poll_s=poll_s) if batch else None
