"""A run's settings and the one table that maps them to `howtobench run`'s options.

`RUN_OPTIONS` says, once per option, which settings attribute the option (flag parameter name, and key of
`runs/<name>/config.yaml`) sets and how its value is written to YAML and read from a flag. `run_config` writes
settings as those keys; `settings_from` builds settings from those keys' values (the CLI hands it its flags,
after the checks and defaults only it knows). A config.yaml read back through `--config` becomes the same flags
(`cli.config_file`), so a run's file repeats the run; adding a saved run option is one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from howtobench.config import EndpointConfig
from howtobench.guard.guard import GuardSettings
from howtobench.guard.run_options import guard_run_options
from howtobench.judges.base import EmptyConvention, calls_a_model
from howtobench.judges.panel import PanelSpec
from howtobench.llm.types import SamplingParams
from howtobench.steps.settings import Execution, Selection

RUN_SAMPLING = SamplingParams(temperature=0.7, max_tokens=4096, seed=0)
"""The writer's sampling unless the run's options say otherwise (`run --temperature / --max-tokens / --seed`)."""


class RunSettings(BaseModel):
    """What a run does; saved as config.yaml (no secret can be in it: endpoints name key variables only).

    `selection`: the items, and the writings judged beside the run's own (its `models` are the paper's shipped
    models judged too; the run's own and --writings rows are never filtered by model; its `seed` is also the
    bootstrap's). `execution`: how the calls are answered (its `parallel` is the writings judged at once, None:
    twice the judge's capacity; its `preflight` checks every configured endpoint once, before the first item).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    run_dir: Path
    selection: Selection
    execution: Execution
    method: str = "tow"
    judge_options: dict[str, Any] = Field(default_factory=dict)
    judge_option: tuple[str, ...] = ()  # --judge-option KEY=VALUE pairs, converted by the method (run._judge_options)
    writer: EndpointConfig | None = None
    judge: EndpointConfig | None = None
    generate: bool = True
    release: bool | None = None  # judge the paper's shipped writings too; None: only when judging is free
    sampling: SamplingParams = Field(default_factory=lambda: RUN_SAMPLING)
    system_prompt: str | None = None
    bootstrap: int = 1000
    paper: bool = True
    empty: EmptyConvention = "exclude"  # how the leaderboard and report count empty writings (judges.base)
    reference_from: str | None = None  # a shipped model or a writings file as the reference (Appendix B.3)
    length_control: bool = False  # add length-controlled tables to the leaderboard and report (report.length_control)
    length_anchor: int = 0  # judge pad/truncate variants of N writings: the judge's length slope (robustness.anchor)
    length_slopes: str = "pooled"  # or "per-model": the root's length slope per model, shrunk (report.length_per_model)
    calibration: Path | None = None  # a calibration file: calibrated tables beside the raw ones (report.calibrated)
    panel: PanelSpec | None = None  # judge with a panel of judges instead of `judge` (judges/panel.py)
    panel_file: Path | None = None  # where the panel came from (written to config.yaml, so the run repeats)
    guard: GuardSettings = Field(default_factory=GuardSettings)  # --guard flag|skip (guard/): off by default

    @property
    def judges_release(self) -> bool:
        """Whether the paper's shipped writings are judged too. Asked for (--release, or naming shipped models):
        yes. Otherwise only when judging costs nothing (the embedded model, or a metric that calls no model):
        with a paid judge the paper's published Table 4 is the reference instead, and re-judging the ten
        shipped models (about ten times the judging of your own model) is an explicit choice."""
        if self.release is not None:
            return self.release
        return bool(self.selection.models) or self.needs_local_judge or not calls_a_model(self.method)

    @property
    def uses_local(self) -> bool:
        """True when the embedded model stands in for a missing judge (or a missing writer that must write)."""
        return self.needs_local_judge or (self.generate and self.writer is None)

    @property
    def smoke_subset(self) -> bool:
        """A local run without item filters judges the small smoke subset rather than the whole benchmark."""
        sel = self.selection
        return self.uses_local and sel.limit is None and sel.ids is None and sel.subset is None

    @property
    def needs_local_judge(self) -> bool:
        return self.judge is None and self.panel is None and calls_a_model(self.method)

    @property
    def judge_endpoints(self) -> dict[str, EndpointConfig | None]:
        """The judge endpoints by lane name: "judge", or "judge <name>" for each judge of a panel."""
        if self.panel is None:
            return {"judge": self.judge}
        return {f"judge {m.name}": m.endpoint for m in self.panel.judges}

    @property
    def judge_label(self) -> str | None:
        """Who judges, in words: the judge model, or the panel's models."""
        if self.panel is not None:
            return "panel(" + ", ".join(f"{m.name}={m.endpoint.model}" for m in self.panel.judges) + ")"
        return self.judge.model if self.judge else None

    @property
    def run_id(self) -> str:
        """Stable across resumes, so the call log sums the whole run's tokens and cost."""
        return f"run:{self.name}"


def endpoint_config(ep: EndpointConfig) -> dict[str, Any]:
    """An endpoint as a `writer:` / `judge:` section of a config file (flag names; no key, only its variable)."""
    data = ep.public()
    data["base_url"], data["timeout"] = list(data.pop("base_urls")), data.pop("timeout_s")
    data.pop("max_concurrency")  # written into concurrency as the flag takes it: 16, auto or auto:N
    data["concurrency"] = ep.concurrency if ep.concurrency is not None else ep.concurrency_text
    return {"base_url": data.pop("base_url"), "model": data.pop("model"), **data}


def _same(value: Any) -> Any:
    return value


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _listed(values: Sequence[Any] | None) -> list[str] | None:
    return [str(v) for v in values] if values else None


def _names(values: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values else None


def _files(values: Sequence[Path | str] | None) -> tuple[Path, ...]:
    return tuple(Path(v) for v in values or ())


def _path(value: Path | str | None) -> Path | None:
    return None if value is None else Path(value)


def _endpoint(ep: EndpointConfig | None) -> dict[str, Any] | None:
    return endpoint_config(ep) if ep else None


@dataclass(frozen=True)
class RunOption:
    """One saved option of `run`: its key (flag parameter name and config.yaml key), the settings attributes it sets
    (dotted: `selection.tasks`; a `judge_options.` path is a key of that dict), how the value is written to YAML
    (None: not written) and how a flag's value becomes the settings'."""

    key: str
    paths: tuple[str, ...]
    to_yaml: Callable[[Any], Any] = _same
    from_flag: Callable[[Any], Any] = _same


GUARD_RUN_OPTIONS: tuple[RunOption, ...] = tuple(
    RunOption(key, (path,), to_yaml, from_flag) for key, path, to_yaml, from_flag in guard_run_options())
"""`run --guard ...` (guard/run_options.py): written to config.yaml only where they differ from the defaults."""

RUN_OPTIONS: tuple[RunOption, ...] = (  # in config.yaml's order
    RunOption("name", ("name",)),
    RunOption("run_dir", ("run_dir",), _text, Path),
    RunOption("data", ("selection.data_dir",), _text, Path),
    RunOption("workspace", ("execution.workspace",), _text, Path),
    RunOption("method", ("method",)),
    RunOption("task", ("selection.tasks",), _listed, _names),
    RunOption("genre", ("selection.genres",), _listed, _names),
    RunOption("limit", ("selection.limit",)),
    RunOption("subset", ("selection.subset",)),
    RunOption("ids", ("selection.ids",), _listed, _names),
    RunOption("writings", ("selection.writings",), _listed, _files),
    RunOption("generate", ("generate",)),
    RunOption("release", ("release",)),
    RunOption("models", ("selection.models",), _listed, _names),
    RunOption("prices", ("execution.prices",), _text, _path),
    RunOption("temperature", ("sampling.temperature",)),
    RunOption("max_tokens", ("sampling.max_tokens",)),
    RunOption("system_prompt", ("system_prompt",)),
    RunOption("seed", ("selection.seed", "sampling.seed")),  # the bootstrap's and --subset's, and the writer's
    RunOption("bootstrap", ("bootstrap",)),
    RunOption("paper", ("paper",)),
    RunOption("empty", ("empty",)),
    RunOption("parallel", ("execution.parallel",)),
    RunOption("length_control", ("length_control",), lambda on: True if on else None),
    RunOption("length_anchor", ("length_anchor",), lambda n: n or None),
    RunOption("length_slopes", ("length_slopes",), lambda v: None if v == "pooled" else v,
              lambda v: str(v or "pooled")),
    RunOption("calibration", ("calibration",), _text, _path),
    RunOption("judge_max_tokens", ("judge_options.max_tokens",)),
    RunOption("prompt_language", ("judge_options.prompt_language",)),
    RunOption("judge_option", ("judge_option",), _listed, lambda pairs: tuple(pairs or ())),
    RunOption("reference_from", ("reference_from",)),
    RunOption("writer", ("writer",), _endpoint),  # its flags (--base-url ...) build it: `cli.options.model_flags`
    RunOption("judge", ("judge",), _endpoint),
    RunOption("panel", ("panel_file",), _text, _path),  # the CLI reads the file into `panel`
    *GUARD_RUN_OPTIONS,
)


def _get(settings: RunSettings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else getattr(value, part)
    return value


def run_config(settings: RunSettings) -> dict[str, Any]:
    """The run's settings as `howtobench run` option keys (see `cli.config_file`), for RUN_DIR/config.yaml."""
    options = {option.key: option.to_yaml(_get(settings, option.paths[0])) for option in RUN_OPTIONS}
    # `run` refuses a judge without a writer unless asked: a run whose embedded model wrote for a judge says so
    options["local_writer"] = True if settings.generate and settings.writer is None and settings.judge else None
    # and a writer (or writings) without a judge unless asked: a run whose embedded model judged them says so too
    options["local_judge"] = (True if settings.needs_local_judge and (settings.writer or settings.selection.writings)
                              else None)
    return {key: value for key, value in options.items() if value is not None}


def settings_from(values: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> RunSettings:
    """Settings from option values by key (each through its `from_flag`; a key not given keeps its default; None
    for an optional judge option leaves it out) and `extra`: values by settings path for what no saved option holds
    (the panel read from its file, the cache mode, --strict, --batch ...)."""
    unknown = set(values) - {option.key for option in RUN_OPTIONS}
    if unknown:
        raise TypeError(f"not options of run: {sorted(unknown)}")
    parts: dict[str, dict[str, Any]] = {"selection": {}, "execution": {}, "sampling": {}, "judge_options": {},
                                        "guard": {}}
    top: dict[str, Any] = {}
    given = [(path, option.from_flag(values[option.key])) for option in RUN_OPTIONS if option.key in values
             for path in option.paths]
    for path, value in [*given, *(extra or {}).items()]:
        head, _, rest = path.partition(".")
        if rest:
            parts[head][rest] = value
        else:
            top[head] = value
    return RunSettings(**top, selection=Selection(**parts["selection"]), execution=Execution(**parts["execution"]),
                       sampling=RUN_SAMPLING.model_copy(update=parts["sampling"]),
                       judge_options={k: v for k, v in parts["judge_options"].items() if v is not None},
                       guard=GuardSettings(**parts["guard"]))
