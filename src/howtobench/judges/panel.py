"""Judge panels: several judge endpoints each run the whole method (ToW: its own weight plan too), and the
panel's score is the mean or median of the judges' own roots, as juries do (PoLL).

A panel file:

    judges:
      - name: a
        base_url: http://localhost:8001/v1
        model: qwen2.5-72b-instruct
        api_key_env: A_KEY          # the keys a config file's `judge:` section takes
      - name: b
        base_url: https://api.openai.com/v1
        model: gpt-4o-mini
        api_key_env: OPENAI_API_KEY
      - name: c
        provider: deepseek          # a named server's defaults (docs/providers.md), under the keys given
        model: deepseek-chat
    aggregate: mean                 # or median
    missing: fail                   # or available

The judgment keeps every judge's own judgment (leaves, weights, root) under `panel.members`; its `score`, nodes
and leaves are the members' combined by the same rule (leaves and nodes for display; the score is the combined
roots, not a root of combined leaves). A judge failing a writing is recorded there. `missing` is the panel's rule
for it: `fail` (default) — the panel judgment fails, naming the judge, so every panel score is over all judges;
`available` — the score is over the judges that scored, the judgment says how many of how many in `failures` and
its status is `renormalized` (counted and warned on the leaderboard), never a silent change of the denominator.
A run-level error of any judge (auth, dead endpoint) stops the run as for a single judge.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from howtobench.concurrency import gather_or_cancel
from howtobench.config import EndpointConfig, NestedTooDeep, safe_yaml, yaml_problem
from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.judges.base import Judge, Judgment, LeafResult, PanelRecord, Status, build_judge
from howtobench.judges.runner import judge_or_fail
from howtobench.llm.types import LLMClient, Usage
from howtobench.llm.wire import provider_defaults
from howtobench.suggest import unknown_name

Aggregate = Literal["mean", "median"]
Missing = Literal["fail", "available"]
ENDPOINT_ALIASES = {"timeout": "timeout_s", "base_urls": "base_urls"}
COMBINE: dict[str, Callable[[Sequence[float]], float]] = {"mean": statistics.fmean, "median": statistics.median}


class PanelMember(BaseModel):
    """One judge of the panel: a name and an endpoint (the `judge:` section's keys)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    endpoint: EndpointConfig


class PanelSpec(BaseModel):
    """The panel file, checked."""

    model_config = ConfigDict(frozen=True)

    judges: tuple[PanelMember, ...] = Field(min_length=2)
    aggregate: Aggregate = "mean"
    missing: Missing = "fail"

    @field_validator("judges")
    @classmethod
    def _unique_names(cls, judges: tuple[PanelMember, ...]) -> tuple[PanelMember, ...]:
        names = [j.name for j in judges]
        if len(set(names)) != len(names):
            raise ValueError(f"judge names must be unique, got {names}")
        return judges

    @property
    def rule(self) -> str:
        """The combination rule in words, as judgments and reports state it."""
        missing = ("a judge that fails a writing fails the panel's judgment" if self.missing == "fail"
                   else "a judge that fails a writing is left out and the count of judges is recorded")
        return f"{self.aggregate} of the {len(self.judges)} judges' own roots; {missing}"


def member_keys() -> list[str]:
    """The keys a judge entry of a panel file may hold: its name, a provider, and the endpoint's settings as a
    `judge:` section of a config file spells them (`base_url`, `timeout`; the field names work too)."""
    fields = [f for f in EndpointConfig.model_fields if f not in ENDPOINT_ALIASES.values()]
    return ["name", "provider", "base_url", "base_urls", "timeout", *fields]


def _member(raw: Any, origin: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or "name" not in raw:
        raise ConfigError(f"{origin}: each entry of `judges:` is a mapping with a `name` and endpoint keys")
    known = member_keys()
    for key in raw:
        if str(key).replace("-", "_") not in known and str(key).replace("-", "_") != "timeout_s":
            raise ConfigError(f"{origin}: judge {raw['name']}: {unknown_name('key', str(key), known)}")
    settings = {ENDPOINT_ALIASES.get(str(k).replace("-", "_"), str(k).replace("-", "_")): v
                for k, v in raw.items() if k != "name"}
    return {"name": str(raw["name"]), "endpoint": _with_profile(settings, f"{origin}: judge {raw['name']}")}


def _with_profile(settings: dict[str, Any], origin: str) -> dict[str, Any]:
    """A judge's `provider:` (llm.wire.PROVIDERS) as defaults under the keys the entry gives itself."""
    name = settings.pop("provider", None)
    if name is None:
        return settings
    try:
        profile = provider_defaults(str(name), settings.get("model"))
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    if "base_url" in settings or "base_urls" in settings:
        profile.pop("base_urls", None)
    return {**profile, **settings}


def load_panel(path: Path) -> PanelSpec:
    """Read and check a panel YAML file; every problem is one ConfigError line naming the file."""
    try:
        raw = safe_yaml(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read panel file {path}: {exc.strerror or exc}") from exc
    except NestedTooDeep as exc:
        raise ConfigError(f"panel file {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"panel file {path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save it "
                          "as UTF-8") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"panel file {yaml_problem(exc, path)}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("judges"), list):
        raise ConfigError(f"panel file {path}: needs `judges:`, a list of judges (name, base_url, model, ...)")
    unknown = sorted(set(raw) - {"judges", "aggregate", "missing"})
    if unknown:
        raise ConfigError(f"panel file {path}: unknown key {unknown[0]!r} (known: judges, aggregate, missing)")
    if len(raw["judges"]) < 2:
        raise ConfigError(f"panel file {path}: a panel needs at least 2 judges, got {len(raw['judges'])}")
    data = {**raw, "judges": [_member(j, str(path)) for j in raw["judges"]]}
    try:
        return PanelSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"panel file {path}: {where}: {first['msg']}") from exc


def combine(spec: PanelSpec, members: dict[str, Judgment]) -> Judgment:
    """The panel's judgment from each judge's own (in the panel file's order)."""
    agg = COMBINE[spec.aggregate]
    first = next(iter(members.values()))
    scored = {name: j.score for name, j in members.items() if j.status != "failed" and j.score is not None}
    missing = [name for name in members if name not in scored]
    failures = [f"judge {name}: {'; '.join(members[name].failures) or 'no root score'}" for name in missing]
    status: Status
    if not scored or (missing and spec.missing == "fail"):
        status, score = "failed", None
        failures.append(f"panel rule (missing: {spec.missing}): no panel score without "
                        + ("every judge" if scored else "any judge"))
    else:
        score = agg(list(scored.values()))
        status = "empty" if first.status == "empty" else "renormalized" if missing else "ok"
        if missing:
            failures.append(f"panel score over {len(scored)} of {len(members)} judges (missing: available)")
    used = [members[n] for n in scored] or list(members.values())
    return Judgment(
        method=first.method, item_id=first.item_id, model=first.model, task=first.task, genre=first.genre,
        score=score, status=status, nodes=_combined_nodes(used, agg), leaves=_combined_leaves(used, agg),
        failures=failures, writing_truncated=any(j.writing_truncated for j in members.values()),
        judge_model="panel(" + ", ".join(f"{n}={j.judge_model}" for n, j in members.items()) + ")",
        tree_hash=_shared(j.tree_hash for j in members.values()),
        prompt_hash=_shared(j.prompt_hash for j in members.values()),
        reference_source=_shared(s for j in members.values() if (s := j.reference_source) is not None),
        usage=sum((j.usage for j in members.values()), Usage()),
        cache_keys=[k for j in members.values() for k in j.cache_keys],
        panel=PanelRecord(aggregate=spec.aggregate, missing=spec.missing, rule=spec.rule, members=members),
    )


def _shared(values: Any) -> str | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _combined_nodes(judgments: Sequence[Judgment], agg: Callable[[Sequence[float]], float]) -> dict[str, float | None]:
    names = list(dict.fromkeys(n for j in judgments for n in j.nodes))
    out: dict[str, float | None] = {}
    for name in names:
        values = [v for j in judgments if (v := j.nodes.get(name)) is not None]
        out[name] = agg(values) if values else None
    return out


def _combined_leaves(judgments: Sequence[Judgment], agg: Callable[[Sequence[float]], float]) -> list[LeafResult]:
    """One leaf per name, its score the members' combined (reasons stay with each member)."""
    by_name: dict[str, list[LeafResult]] = {}
    for j in judgments:
        for leaf in j.leaves:
            by_name.setdefault(leaf.name, []).append(leaf)
    out = []
    for name, leaves in by_name.items():
        values = [leaf.score for leaf in leaves if leaf.score is not None]
        out.append(LeafResult(name=name, node=leaves[0].node, score=agg(values) if values else None,
                              status="ok" if values else leaves[0].status))
    return out


class PanelJudge:
    """A judge made of judges: each runs the whole method on the writing, at once; `combine` joins them."""

    def __init__(self, spec: PanelSpec, judges: dict[str, Judge]) -> None:
        self.spec = spec
        self.judges = judges
        self.method = next(iter(judges.values())).method

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        """Every judge at once, through the bounded gather every job uses (`concurrency.gather_or_cancel`): a
        run-level error of one judge cancels the others; a stop that lets siblings finish (--max-cost, Ctrl-C)
        lets the other judges' calls in flight land and be recorded first — cancelling them lost answers already
        paid for, and the resumed run paid for them again."""
        results = await gather_or_cancel(*(judge_or_fail(j, item, writing) for j in self.judges.values()))
        return combine(self.spec, dict(zip(self.judges, results, strict=True)))


def build_panel(panel: PanelSpec, method: str, clients: Mapping[str, LLMClient | None],
                options: Mapping[str, Any]) -> PanelJudge:
    """The panel's judge: one `method` judge with `options` per member, on that member's client (`clients`, by
    member name, as `steps.client.panel_clients` opens them). The one way a panel is assembled: by the judge and
    run jobs (`steps.judge.open_panel_judge`) and by `serve` (`serve.judging.JudgeSet`)."""
    return PanelJudge(panel, {m.name: build_judge(method, clients[m.name], options) for m in panel.judges})
