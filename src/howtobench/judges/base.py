"""The judgment record every method writes, the judge interface, and the registry of judge methods.

One `Judgment` per (method, item, model): the final score (None when it cannot be
computed honestly), every sub-score with its reason or failure, and the provenance
(judge model, tree / prompt hashes, cache keys, tokens). ToW, the LLM baselines and the
overlap metrics all write this shape, so leaderboards and meta-evaluation read one format.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from howtobench.data.models import Item, Writing
from howtobench.errors import JudgeError
from howtobench.llm.types import LLMClient, Usage
from howtobench.registry import GROUPS, Registry

Status = Literal["ok", "failed", "empty", "renormalized"]
EmptyConvention = Literal["exclude", "lowest"]
EMPTY_CONVENTIONS: tuple[str, ...] = ("exclude", "lowest")
"""How means, correlations and score differences treat an empty writing: "exclude" (default: left out and counted,
as the authors' pipeline writes no judgment for an empty writing, so nothing downstream of it saw one) or "lowest"
(the lowest score the judge recorded for it, flagged `empty`). `counted_score` is the one place that applies it."""
EMPTY_TREATMENT: dict[str, str] = {"exclude": "left out", "lowest": "scored lowest"}
"""What each convention does to an empty writing, in the words every output uses."""
LeafStatus = Literal["ok", "failed", "empty"]


class LeafResult(BaseModel):
    """One scored dimension (a ToW leaf, a rubric dimension, an auto-plan sub-score)."""

    name: str
    node: str | None = None
    score: float | None = None
    raw_score: float | None = None
    reason: str | None = None
    status: LeafStatus = "ok"
    error: str | None = None
    raw_text: str | None = None
    cache_key: str | None = None


class SampleResult(BaseModel):
    """One sample of a self-consistency run (or the only one when n = 1)."""

    index: int = 0
    score: float | None = None
    status: Status = "ok"
    nodes: dict[str, float | None] = Field(default_factory=dict)
    """This sample's node scores (ToW with sampled weights: each weight sample gives its own Content / Format);
    empty in rows written before they were stored, and for judges without nodes."""
    leaves: list[LeafResult] = Field(default_factory=list)
    error: str | None = None
    raw_text: str | None = None
    cache_key: str | None = None


class Judgment(BaseModel):
    """The full record of judging one writing with one method."""

    method: str
    item_id: str
    model: str
    task: str
    genre: str
    score: float | None = None
    status: Status = "ok"
    nodes: dict[str, float | None] = Field(default_factory=dict)
    leaves: list[LeafResult] = Field(default_factory=list)
    weights: dict[str, float] = Field(default_factory=dict)
    weight_repairs: list[str] = Field(default_factory=list)
    samples: list[SampleResult] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    # the judged writing was cut by max_tokens or a content filter (`Writing.truncated`): counted on the leaderboard
    writing_truncated: bool = False
    # characters of the judged writing and of its item's human reference, stamped by `with_lengths` so the
    # length-controlled leaderboard needs neither file again (None in rows written before; 0 = no reference)
    writing_chars: int | None = None
    reference_chars: int | None = None
    judge_model: str | None = None
    tree_hash: str | None = None
    prompt_hash: str | None = None
    prompt_language: str | None = None
    """The language of the judge's prompts (en: the authors'; zh: `--prompt-language zh`); None for no prompt."""
    reference_source: str | None = None
    """Whose writing the judge read as the reference: "human" (the release's) or "model:NAME" / "file:NAME"
    (`--reference-from`, Appendix B.3); None when it read none (`--no-reference`, an item without one, a writing
    that failed before any judging) and in files written before it was recorded. Set by the judge itself, which
    alone knows (`source_if_read`)."""
    judge_options: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda options: not options)
    """The options the judge was built with (`build_judge`: the flags and every `--judge-option`), so a row says
    how it was judged; left out of the file when there were none (rows written before it was recorded too)."""
    usage: Usage = Field(default_factory=Usage)
    cache_keys: list[str] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    panel: PanelRecord | None = None
    """A panel's judgment (judges.panel): every judge's own judgment and the rule that combined them."""

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity used for resume: one judgment per (method, item, model)."""
        return (self.method, self.item_id, self.model)


class PanelRecord(BaseModel):
    """What a panel judgment keeps: the rule, and each judge's own judgment by the judge's name."""

    aggregate: str
    missing: str
    rule: str
    members: dict[str, Judgment]


Judgment.model_rebuild()


def with_lengths(judgment: Judgment, item: Item, writing: Writing) -> Judgment:
    """The judgment with the character counts of its writing and of the item's reference recorded."""
    return judgment.model_copy(update={"writing_chars": len(writing.output), "reference_chars": len(item.reference)})


def source_if_read(item: Item, read: bool) -> str | None:
    """The reference source a judge records: the item's when the judge `read` the item's (non-empty) reference,
    None when it judged without one."""
    return item.reference_source if read and item.reference.strip() else None


def check_empty(empty: str) -> EmptyConvention:
    """`empty` itself when it names a convention; else a ValueError listing them."""
    if empty not in EMPTY_CONVENTIONS:
        raise ValueError(f"empty must be one of {', '.join(EMPTY_CONVENTIONS)}, not {empty!r}")
    return empty  # type: ignore[return-value]


def left_out_as_empty(judgment: Judgment, empty: EmptyConvention) -> bool:
    """True for the judgment of an empty writing when the convention leaves such writings out."""
    return judgment.status == "empty" and empty == "exclude"


def counted_score(judgment: Judgment, empty: EmptyConvention = "exclude", node: str | None = None) -> float | None:
    """The value a mean uses for this judgment (its root, or `node`): None for a failure, and for an empty writing
    unless `empty` is "lowest". Never a made-up number: a judgment without a score stays without one."""
    if judgment.status == "failed" or left_out_as_empty(judgment, empty):
        return None
    return judgment.score if node is None else judgment.nodes.get(node)


class Judge(Protocol):
    """A scoring method. Pure given (item, writing, settings): all state lives in the cache."""

    method: str

    async def judge(self, item: Item, writing: Writing) -> Judgment: ...


JudgeFactory = Callable[..., Judge]
BUILTIN_MODULES: tuple[str, ...] = (
    "howtobench.judges.tree_of_writing",
    "howtobench.judges.overlap_methods",
    "howtobench.judges.baselines",
)
ENTRY_POINT_GROUP = GROUPS["judge method"]
"""Installed packages add judge methods here: an entry point names a module that calls `register_judge` when
imported (`[project.entry-points."howtobench.judges"] mine = "my_package.judge"`)."""


@dataclass(frozen=True)
class Method:
    """What a judge method is, as everything that needs to know asks it (no hand-kept lists of names).

    `calls_model`: False for methods that never call a model (overlap metrics, re-aggregation): no endpoint, no
    preflight, no estimate. `takes`: the callable whose signature names the options (the factory unless it passes
    `**options` on to a class). `scorer`: the method has an inspect scorer of its own name (`howtobench/<name>`).
    `rejudges`: the method whose stored judgments it re-aggregates (`--from`), which bound its selection.
    `paper_scale`: its scores stand on the footing of the paper's Table 4 (ToW), so the published columns may
    stand next to them. `smoke_options`: its options for the embedded model's smoke judge (small budgets).
    `score_max`: the top of its scores (10 for the judges, 100 for BLEU, 1 for ROUGE), which scales a reward to 0-1.
    """

    name: str
    factory: JudgeFactory
    description: str
    calls_model: bool = True
    takes: Callable[..., Any] | None = None
    scorer: bool = False
    rejudges: str | None = None
    paper_scale: bool = False
    smoke_options: Mapping[str, Any] = field(default_factory=dict)
    score_max: float = 10.0

    @property
    def options(self) -> frozenset[str] | None:
        """The option names the method takes; None when its signature accepts any (`**options` to nowhere seen)."""
        return option_names(self.takes or self.factory)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """An option the method does not take is the user's mistake, said before anything is built."""
        known = self.options
        unknown = sorted(set(options) - known) if known is not None else []
        if unknown:
            takes = ", ".join(sorted(known or ())) or "none"
            raise JudgeError(f"method {self.name!r} does not take the options {unknown} (it takes: {takes})")

    def convert_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Options given as text (`--judge-option KEY=VALUE`, an adapter's arguments) as the values the method
        takes: each name checked (`check_options`) and each value validated into the type its signature
        annotates (`samples=3` -> 3; a wrong value is the user's mistake, naming the option). A parameter without
        a usable annotation takes the value as YAML reads a scalar (3 -> 3, true -> True, a text stays text)."""
        self.check_options(given)
        types = option_types(self.takes or self.factory)
        converted: dict[str, Any] = {}
        for name, value in given.items():
            kind = types.get(name, Any)
            if isinstance(value, str) and kind is Any:
                value = yaml.safe_load(value) if value.strip() else value
            try:
                converted[name] = value if kind is Any else TypeAdapter(kind).validate_python(value)
            except ValidationError as exc:
                problem = exc.errors()[0]["msg"]
                raise JudgeError(f"--judge-option {name}={value}: {problem} (method {self.name!r})") from None
        return converted

    def build(self, client: LLMClient | None, options: Mapping[str, Any]) -> Judge:
        """The judge, each of its judgments recording `options` (`Judgment.judge_options`); a TypeError from inside
        the factory after the options were checked is a bug, raised as one."""
        self.check_options(options)
        return OptionsRecorded(self.factory(client=client, **options), dict(options))


class OptionsRecorded:
    """A judge whose judgments record the options it was built with; everything else is the judge's own
    (`inner`'s attributes read through). `built_with` is what a failed judgment records too (judges.runner)."""

    def __init__(self, inner: Judge, options: dict[str, Any]) -> None:
        self.inner = inner
        self.method = inner.method
        self.built_with = options

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        judgment = await self.inner.judge(item, writing)
        return judgment.model_copy(update={"judge_options": self.built_with}) if self.built_with else judgment

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("inner")  # not self.inner: before __init__ (a copy, a pickle) that would recurse
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def option_types(target: Callable[..., Any]) -> dict[str, Any]:
    """The annotated type of each keyword option along the chain `option_names` reads (Any where an annotation
    cannot be resolved): what `Method.convert_options` validates a given value into."""
    functions = _option_functions(target)
    types: dict[str, Any] = {}
    for function in reversed(functions):  # the subclass's annotation wins
        try:
            hints = typing.get_type_hints(function)
        except Exception:  # an annotation naming what its module cannot resolve: no type to check against
            hints = {}
        types.update({name: hint for name, hint in hints.items() if name not in ("return", "self", "client")})
    return types


def _option_functions(target: Callable[..., Any]) -> list[Callable[..., Any]]:
    if isinstance(target, type):
        return [vars(cls)["__init__"] for cls in target.__mro__ if "__init__" in vars(cls) and cls is not object]
    return [target]


def option_names(target: Callable[..., Any]) -> frozenset[str] | None:
    """Keyword options of a factory or class (`client` and `self` aside), following a class's `**options` up its
    bases' `__init__`s; None when some `**options` leads nowhere this can read (a plain function's)."""
    names: set[str] = set()
    for function in _option_functions(target):
        parameters = inspect.signature(function).parameters.values()
        names |= {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return frozenset(names - {"self", "client"})
    return None


METHODS: Registry[Method] = Registry("judge method", error=JudgeError, builtin_modules=BUILTIN_MODULES)
"""The registry: `--method` name -> what the method is. Filled by `register_judge` as judge modules import: the
toolkit's (`BUILTIN_MODULES`), then every installed `howtobench.judges` entry point (howtobench.registry)."""


def register_judge(method: str, *, description: str | None = None, calls_model: bool = True,
                   takes: Callable[..., Any] | None = None, scorer: bool = False, rejudges: str | None = None,
                   paper_scale: bool = False, smoke_options: Mapping[str, Any] | None = None,
                   score_max: float = 10.0) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a judge factory under its `--method` name, with what it is (see `Method`); the description
    defaults to the first line of the factory's docstring."""

    def decorate(factory: JudgeFactory) -> JudgeFactory:
        METHODS.register(method, Method(method, factory, description or _first_line(factory.__doc__), calls_model,
                                        takes, scorer, rejudges, paper_scale, dict(smoke_options or {}), score_max),
                         origin=factory.__module__)
        return factory

    return decorate


class _Factories(Mapping[str, JudgeFactory]):
    """`JUDGES[name]`: the registry's factories, read-only (the registry is `METHODS`)."""

    def __getitem__(self, name: str) -> JudgeFactory:
        return METHODS[name].factory

    def __iter__(self) -> Iterator[str]:
        return iter(METHODS)

    def __len__(self) -> int:
        return len(METHODS)


JUDGES: Mapping[str, JudgeFactory] = _Factories()


def _first_line(doc: str | None) -> str:
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def import_judges() -> None:
    """Fill the registry: the toolkit's judge modules (a missing optional one is skipped), then every installed
    `howtobench.judges` entry point, once per process. A plugin that fails to import stops with its name, not a
    traceback."""
    METHODS.load()


def method_info(name: str) -> Method:
    """A registered method by name; an unknown one is an error with the known names (and did-you-mean)."""
    return METHODS.lookup(name)


def calls_a_model(method: str) -> bool:
    """True for a registered judge method that calls a model (False for overlap metrics and unknown names)."""
    import_judges()
    return method in METHODS and METHODS[method].calls_model


def build_judge(method: str, client: LLMClient | None, options: Mapping[str, Any]) -> Judge:
    """A judge from the registry; an option the method does not take is a clear error, not ignored, while a
    constructor's own TypeError is a bug and keeps its traceback."""
    return method_info(method).build(client, options)
