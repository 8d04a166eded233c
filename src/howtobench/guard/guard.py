"""The guard in front of a judge: the signals of every writing, its flags, and under `skip` no judge call at all.

`--guard flag` (serve's default) computes the signals and records them on the judgment (`meta["guard"]`), so they
come back with every reward and in /metrics. `--guard skip` also answers a writing that a skip rule flags without
calling the judge: its judgment is failed (a skipped writing is counted like a failure, never as a score), says why,
and declares the reward a trainer gets for it (`reward`): the method's floor (0, the bottom of every method's
scale) by default, or null (then the server's `--failed-reward` rules apply, as to any failed sample). `off` (the
default of `judge` / `run`: the paper judges everything) computes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from howtobench.data.models import Item, Writing
from howtobench.errors import ConfigError
from howtobench.guard.lexicon import Lexicon
from howtobench.guard.rules import DEFAULT_RULES, Rule, rules_with
from howtobench.guard.signals import Signals, signals
from howtobench.judges.base import Judge, Judgment, with_lengths

GuardMode = Literal["off", "flag", "skip"]
GUARD_MODES: tuple[str, ...] = ("off", "flag", "skip")
FLOOR = 0.0
"""The reward of a skipped writing under `--guard-reward floor`: the bottom of every method's scale (ToW 0-10,
BLEU 0-100, ROUGE 0-1), at or under any score the judge gives a writing."""
META_KEY = "guard"
GUARD_KEYS = ("guard", "guard_reward", "guard_thresholds", "guard_cliches")
"""The guard's arguments of the in-process adapters (`adapter_guard`)."""
SKIPPED_PREFIX = "guard: skipped without a judge call"


@dataclass(frozen=True)
class GuardSettings:
    """The guard's mode, thresholds and lexicon; `reward` of a skipped writing: "floor", None or a number."""

    mode: GuardMode = "off"
    thresholds: dict[str, float] = field(default_factory=dict)
    actions: dict[str, Literal["skip", "flag"]] = field(default_factory=dict)
    reward: float | str | None = "floor"
    cliches: Path | None = None

    def __post_init__(self) -> None:
        if self.mode not in GUARD_MODES:
            raise ConfigError(f"--guard is one of {', '.join(GUARD_MODES)}, not {self.mode!r}")
        if isinstance(self.reward, str) and self.reward != "floor":
            raise ConfigError(f"--guard-reward is floor, null or a number, not {self.reward!r}")


def parse_guard_reward(text: str) -> float | str | None:
    """`floor`, `null` (None) or a number, as `--guard-reward` takes it."""
    if text in ("floor", "null"):
        return None if text == "null" else "floor"
    try:
        return float(text)
    except ValueError as exc:
        raise ConfigError(f"--guard-reward is floor, null or a number, not {text!r}") from exc


@dataclass(frozen=True)
class Verdict:
    """What the guard says of one writing: its signals, the rules that flag it, and the skip reason and rules (if
    skipped)."""

    signals: Signals
    flags: tuple[str, ...]
    reasons: tuple[str, ...]
    skip: str | None
    skipped_by: tuple[str, ...] = ()

    def record(self, reward: float | None = None) -> dict[str, Any]:
        """The `meta["guard"]` of a judgment: `reward` only for a skipped writing."""
        out: dict[str, Any] = {"signals": self.signals.as_dict(), "flags": list(self.flags),
                               "skipped": self.skip is not None}
        if self.skip is not None:
            out.update(reason=self.skip, skipped_by=list(self.skipped_by), reward=reward)
        return out


class Guard:
    """The rules of a `GuardSettings`, ready to check writings (build once: the lexicon is read here)."""

    def __init__(self, settings: GuardSettings | None = None) -> None:
        self.settings = settings or GuardSettings()
        s = self.settings
        self.rules: tuple[Rule, ...] = rules_with(s.thresholds, s.actions) if (s.thresholds or s.actions) \
            else DEFAULT_RULES
        self.lexicon = Lexicon.load(s.cliches) if s.cliches is not None else Lexicon.default()

    @property
    def on(self) -> bool:
        return self.settings.mode != "off"

    def check(self, item: Item, text: str) -> Verdict:
        """The verdict on `text` written for `item` (skip reason only in `skip` mode)."""
        found = signals(text, reference_chars=len(item.reference.strip()), language=item.language,
                        prompt=item.task_prompt, lexicon=self.lexicon)
        hits = [r for r in self.rules if r.flags(found)]
        skipping = [r for r in hits if r.skip] if self.settings.mode == "skip" else []
        return Verdict(found, tuple(r.name for r in hits), tuple(r.describe(found) for r in hits),
                       "; ".join(r.describe(found) for r in skipping) or None, tuple(r.name for r in skipping))

    def reward(self) -> float | None:
        """The declared reward of a skipped writing."""
        r = self.settings.reward
        return FLOOR if r == "floor" else (None if r is None else float(r))

    def skipped(self, method: str, item: Item, writing: Writing, verdict: Verdict) -> Judgment:
        """The failed judgment of a skipped writing: no call, the reason, the declared reward."""
        judgment = Judgment(method=method, item_id=item.id, model=writing.model, task=item.task, genre=item.genre,
                            status="failed", failures=[f"{SKIPPED_PREFIX}: {verdict.skip}"],
                            meta={META_KEY: verdict.record(self.reward())})
        return with_lengths(judgment, item, writing)

    def annotate(self, judgment: Judgment, verdict: Verdict) -> Judgment:
        return judgment.model_copy(update={"meta": {**judgment.meta, META_KEY: verdict.record()}})


class GuardedJudge:
    """A judge behind the guard (the `Judge` protocol): `judge` / `run --guard`, serve and `score(guard=...)`."""

    def __init__(self, inner: Judge, guard: Guard) -> None:
        self.inner, self.guard = inner, guard
        self.method = inner.method

    def __getattr__(self, name: str) -> Any:  # the inner judge's tree, options, ... as before
        if name == "inner":  # not set yet (a copy being built): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def judge(self, item: Item, writing: Writing) -> Judgment:
        verdict = self.guard.check(item, writing.output)
        if verdict.skip is not None:
            return self.guard.skipped(self.method, item, writing, verdict)
        return self.guard.annotate(await self.inner.judge(item, writing), verdict)


def guarded(judge: Judge, guard: Guard | None) -> Judge:
    """`judge` behind `guard` (itself when there is no guard or it is off)."""
    return judge if guard is None or not guard.on else GuardedJudge(judge, guard)


def guard_record(judgment: Judgment | None) -> dict[str, Any] | None:
    """The guard's record on a judgment (None: not guarded)."""
    if judgment is None:
        return None
    record = judgment.meta.get(META_KEY)
    return record if isinstance(record, dict) else None


def is_skipped(judgment: Judgment | None) -> bool:
    record = guard_record(judgment)
    return bool(record and record.get("skipped"))


def skipped_reward(judgment: Judgment) -> float | None:
    """The declared reward of a skipped judgment."""
    record = guard_record(judgment) or {}
    value = record.get("reward")
    return None if value is None else float(value)


def serve_default() -> GuardSettings:
    """`serve`'s and the adapters' guard when none is given: `flag` (signals with every reward, nothing skipped)."""
    return GuardSettings(mode="flag")


def adapter_guard(given: Mapping[str, Any]) -> GuardSettings:
    """The guard of the in-process adapters from their arguments (`guard`, `guard_reward`, `guard_thresholds` as
    `["RULE=NUMBER", ...]`, `guard_cliches`: the names of serve's flags); `flag` when none is given."""
    from howtobench.guard.rules import parse_thresholds

    reward = given.get("guard_reward", "floor")
    cliches = given.get("guard_cliches")
    return GuardSettings(mode=given.get("guard", "flag"),
                         thresholds=parse_thresholds(list(given.get("guard_thresholds") or [])),
                         reward=parse_guard_reward(str(reward)) if isinstance(reward, str) else reward,
                         cliches=Path(cliches) if cliches else None)


def guard_for(given: GuardSettings | str | None) -> Guard | None:
    """The guard of `score(guard=...)`: a mode ("off", "flag", "skip"), settings, or None (no guard)."""
    if given is None:
        return None
    return Guard(given if isinstance(given, GuardSettings) else GuardSettings(mode=given))  # type: ignore[arg-type]


def guard_counts(judgments: Sequence[Judgment]) -> tuple[int, int]:
    """(judgments the guard flagged, judgments it skipped) among `judgments`, for the leaderboard's counts."""
    records = [guard_record(j) for j in judgments]
    return (sum(bool(r and r.get("flags")) for r in records), sum(bool(r and r.get("skipped")) for r in records))
