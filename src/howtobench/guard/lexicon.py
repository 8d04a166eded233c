"""The cliche / template-phrase lexicon of the guard's `cliche_rate`: ours (`data/cliches.yaml`) or the user's.

A lexicon is a YAML mapping of language to a list of phrases. Every phrase is counted as a plain substring of the
lower-cased text (`str.count`, non-overlapping); a phrase that contains another one of the lexicon is dropped, so no
text is counted twice ("as an ai language model" counts once, as "as an ai").
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from howtobench.errors import ConfigError


class Lexicon:
    """Phrases whose density marks formulaic writing."""

    def __init__(self, phrases: dict[str, list[str]], source: str = "howtobench") -> None:
        words = sorted({p.strip().lower() for ps in phrases.values() for p in ps if p.strip()}, key=len)
        if not words:
            raise ConfigError(f"the cliche lexicon {source} has no phrases")
        self.phrases = [w for i, w in enumerate(words) if not any(v in w for v in words[:i])]
        self.source = source

    @staticmethod
    @cache
    def default() -> Lexicon:
        text = resources.files("howtobench.guard").joinpath("data/cliches.yaml").read_text(encoding="utf-8")
        return Lexicon(_phrases(yaml.safe_load(text), "data/cliches.yaml"), "howtobench")

    @staticmethod
    def load(path: Path) -> Lexicon:
        """A user's lexicon file (same shape as `data/cliches.yaml`); a ConfigError says what is wrong with it."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the cliche lexicon {path}: {exc}") from exc
        return Lexicon(_phrases(raw, str(path)), str(path))

    def count(self, text: str) -> int:
        lowered = text.lower()
        return sum(lowered.count(phrase) for phrase in self.phrases)

    def rate(self, text: str, chars: int) -> float:
        """Matches per 1,000 characters (0 for an empty text)."""
        return 1000.0 * self.count(text) / chars if chars else 0.0


def _phrases(raw: Any, source: str) -> dict[str, list[str]]:
    if not isinstance(raw, dict) or not all(isinstance(v, list) and all(isinstance(p, str) for p in v)
                                            for v in raw.values()):
        raise ConfigError(f"the cliche lexicon {source} must map languages to lists of phrases "
                          "(zh: [...], en: [...])")
    return {str(k): v for k, v in raw.items()}
