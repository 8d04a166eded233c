"""The guard's rules: each a named threshold on one signal, and whether `--guard skip` skips what it flags.

Defaults are set on the release's 13,020 writings of the paper's ten models (docs/guard.md gives each rule's count,
`bench/guard.py` prints them): a skip rule flags only writings no judge should be paid for (a 2-character fill of a
600-character blank, a text half of which is repeated paragraphs, an English answer to a Chinese item), 37 of the
13,020 (0.28 %); the flag-only rules mark what deserves a look but can be fine writing (a long text, a Completion
answer that copies its context, a writing dense with set phrases, an empty writing - which the judge already scores
at its lowest without any call).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from howtobench.errors import ConfigError
from howtobench.guard.signals import Signals
from howtobench.suggest import unknown_name

NO_REFERENCE_STUB_CHARS = 20
"""Without a reference to compare with, `stub` flags a writing of fewer characters than this."""
MIN_COMPRESSIBLE_CHARS = 200
"""zlib's header outweighs the text below this: `compressible` judges only longer writings."""


@dataclass(frozen=True)
class Rule:
    """Flag a writing whose `signal` is below (`below=True`) or at/above `threshold`; `skip`: `--guard skip` answers
    it without a judge call."""

    name: str
    signal: str
    threshold: float
    below: bool
    skip: bool
    why: str

    def value(self, s: Signals) -> float | None:
        """The signal this rule reads (None: the rule does not apply to this writing)."""
        if self.name == "stub":
            if s.chars == 0:
                return None  # the `empty` rule's
            if s.length_ratio is None:
                return 0.0 if s.chars < NO_REFERENCE_STUB_CHARS else None
        if self.name == "compressible" and s.chars < MIN_COMPRESSIBLE_CHARS:
            return None
        value = getattr(s, self.signal)
        return None if value is None else float(value)

    def flags(self, s: Signals) -> bool:
        value = self.value(s)
        if value is None:
            return False
        return value < self.threshold if self.below else value >= self.threshold

    def describe(self, s: Signals) -> str:
        """`loop_paragraphs: repeated_paragraph_share 0.97 >= 0.5`."""
        value = self.value(s)
        shown = "n/a" if value is None else f"{value:.3g}"
        return f"{self.name}: {self.signal} {shown} {'<' if self.below else '>='} {self.threshold:g}"


DEFAULT_RULES: tuple[Rule, ...] = (
    Rule("empty", "chars", 1, True, False, "no text (the judge scores it at its lowest without any call)"),
    Rule("stub", "length_ratio", 0.02, True, True, "under 2 % of the reference's length (or under 20 characters "
         "without a reference)"),
    Rule("long", "length_ratio", 6.0, False, False, "over 6 times the reference's length"),
    Rule("loop_paragraphs", "repeated_paragraph_share", 0.5, False, True, "half the text in repeated paragraphs"),
    Rule("loop_sentences", "repeated_sentence_share", 0.5, False, True, "half the text in repeated sentences"),
    Rule("loop_ngrams", "repeated_ngram_share", 0.6, False, True, "60 % of its 20-grams seen earlier in it"),
    Rule("compressible", "compression_ratio", 0.15, True, True, "compresses to under 15 % (a loop)"),
    Rule("wrong_language", "foreign_share", 0.8, False, True, "80 % of its words in another script than the item's"),
    Rule("echo", "echo_share", 0.9, False, False, "90 % of it copied from the instruction or information"),
    Rule("cliches", "cliche_rate", 15.0, False, False, "15 set phrases per 1,000 characters"),
)
RULE_NAMES: tuple[str, ...] = tuple(r.name for r in DEFAULT_RULES)


def rules_with(thresholds: Mapping[str, float] | None = None,
               actions: Mapping[str, Literal["skip", "flag"]] | None = None) -> tuple[Rule, ...]:
    """The default rules with the user's thresholds and actions (`skip` / `flag`) in place; unknown names are a
    ConfigError that names the rules."""
    thresholds, actions = dict(thresholds or {}), dict(actions or {})
    for name in [*thresholds, *actions]:
        if name not in RULE_NAMES:
            raise ConfigError(unknown_name("guard rule", name, RULE_NAMES))
    for name, action in actions.items():
        if action not in ("skip", "flag"):
            raise ConfigError(f"guard rule {name}: the action is skip or flag, not {action!r}")
    return tuple(replace(r, threshold=float(thresholds.get(r.name, r.threshold)),
                         skip=actions.get(r.name, "skip" if r.skip else "flag") == "skip") for r in DEFAULT_RULES)


def parse_assignments(values: list[str] | None, what: str) -> dict[str, str]:
    """`["loop_paragraphs=0.4", ...]` as a dict; a ConfigError for a value without `=`."""
    out: dict[str, str] = {}
    for value in values or []:
        name, sep, text = value.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise ConfigError(f"{what} takes RULE=VALUE (e.g. loop_paragraphs=0.4), not {value!r}")
        out[name.strip()] = text.strip()
    return out


def parse_thresholds(values: list[str] | None) -> dict[str, float]:
    """`--guard-threshold RULE=NUMBER` values as numbers."""
    out = {}
    for name, text in parse_assignments(values, "--guard-threshold").items():
        try:
            out[name] = float(text)
        except ValueError as exc:
            raise ConfigError(f"--guard-threshold {name}={text}: not a number") from exc
    return out
